#pragma once
// The three KV-cache kinds of worker.gpustack.ai/v1, in one include: KVCacheBackend
// (backend.h), KVCachePool (pool.h) and KVCachePoolBinding (binding.h).

#include "kvc/api/backend.h"
#include "kvc/api/binding.h"
#include "kvc/api/pool.h"
