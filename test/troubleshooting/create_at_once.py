#!/usr/bin/env python3
"""Creates the KVCachePoolBinding `claim` of POOL, reuse domain DOMAIN, in each NAMESPACE at the
same instant: one connection per namespace opened and the request sent from a thread each,
released together by a barrier, so both reach the admission webhook before either Binding is in
the other's informer cache (a kubectl per create starts too far apart). Prints the HTTP status of
each create, in the order of the namespaces.

usage: create_at_once.py SERVER CA CERT KEY POOL DOMAIN NAMESPACE...
"""
import http.client
import json
import ssl
import sys
import threading
import urllib.parse


def main() -> None:
    server, ca, cert, key, pool, domain, *namespaces = sys.argv[1:]
    url = urllib.parse.urlsplit(server)
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    barrier = threading.Barrier(len(namespaces))
    codes = [""] * len(namespaces)

    def create(i: int, namespace: str) -> None:
        body = json.dumps({
            "apiVersion": "worker.gpustack.ai/v1",
            "kind": "KVCachePoolBinding",
            "metadata": {"name": "claim", "namespace": namespace},
            "spec": {"poolRef": {"name": pool}, "quota": {"ceiling": "128Mi"},
                     "domain": {"name": domain, "blockSize": 64, "dtype": "bfloat16"}},
        })
        connection = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=30)
        connection.connect()  # the TLS handshake before the barrier: only the request races
        barrier.wait()
        connection.request("POST", f"/apis/worker.gpustack.ai/v1/namespaces/{namespace}/kvcachepoolbindings",
                           body=body, headers={"Content-Type": "application/json"})
        codes[i] = str(connection.getresponse().status)
        connection.close()

    threads = [threading.Thread(target=create, args=(i, n)) for i, n in enumerate(namespaces)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(" ".join(codes))


if __name__ == "__main__":
    main()
