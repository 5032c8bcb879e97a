#!/usr/bin/env bash
# ctest's entry point for everything that needs the real store (test/store/CMakeLists.txt).
#
# usage: ctest-run.sh up|down DIR [store.sh options]   the fixture: start or stop the store in DIR
#        ctest-run.sh run DIR COMMAND [ARGS...]          a test: COMMAND with DIR/env exported
#
# KVC_SKIP_INTEGRATION=1 is the one opt-out: every entry then prints a loud SKIPPED and exits 77,
# which ctest reports as skipped. Nothing else skips: a missing venv is installed by `up`, and a
# store that does not come up is a failure.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ACTION=${1:?usage: ctest-run.sh up|down|run DIR ...}
DIR=${2:?usage: ctest-run.sh up|down|run DIR ...}
shift 2

if [ "${KVC_SKIP_INTEGRATION:-}" = 1 ]; then
  echo "************************************************************************" >&2
  echo "SKIPPED: KVC_SKIP_INTEGRATION=1 is set, so the real Mooncake store is not" >&2
  echo "started and this integration test ($ACTION) did not run. Unset it to run." >&2
  echo "************************************************************************" >&2
  exit 77
fi

case $ACTION in
  up) exec "$HERE/store.sh" "$@" up "$DIR" ;;
  down) exec "$HERE/store.sh" down "$DIR" ;;
  run)
    [ -f "$DIR/env" ] || { echo "ctest-run.sh: no store in $DIR (did store.up fail?)" >&2; exit 1; }
    set -a
    # shellcheck disable=SC1091
    . "$DIR/env"
    set +a
    export KVC_STORE_ENV=$DIR/env
    exec "$@"
    ;;
  *) echo "ctest-run.sh: unknown action '$ACTION'" >&2; exit 2 ;;
esac
