"""A store client that writes one object, as an engine would: the wheel's Python store API.

Used by the integration tests (strict multi-tenant admission, a tenant that holds data) and by
capture-fixtures.sh. Prints the return code of put() as the last line of stdout ("put=<rc>",
0 on success, a negative Mooncake error code otherwise, e.g. -1701 TENANT_NOT_REGISTERED), and
exits 0 when put() was called at all (2 when setup failed).

usage: writer.py --master HOST:PORT --tenant ID [--key K] [--bytes N]
"""

import argparse
import sys

from mooncake.store import MooncakeDistributedStore


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True, help="master RPC address, host:port")
    parser.add_argument("--tenant", required=True, help="tenant id the client writes under")
    parser.add_argument("--key", default="kvc-test-object")
    parser.add_argument("--bytes", type=int, default=1 << 20)
    args = parser.parse_args()

    store = MooncakeDistributedStore()
    # No contributed segment: the object lands on the members' segments.
    rc = store.setup(
        local_hostname="127.0.0.1",
        metadata_server="P2PHANDSHAKE",
        global_segment_size=0,
        local_buffer_size=16 << 20,
        protocol="tcp",
        rdma_devices="",
        master_server_addr=args.master,
        tenant_id=args.tenant,
    )
    if rc != 0:
        print(f"setup={rc}", flush=True)
        return 2
    rc = store.put(args.key, b"k" * args.bytes)
    print(f"put={rc}", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
