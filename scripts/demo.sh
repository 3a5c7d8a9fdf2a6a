#!/bin/bash
# make demo: from a fresh machine, install what is missing, build the test
# kernel and the module, boot a VM, make an 8-channel rainssd volume on
# null_blk with dmsetup create, run a short fio job, print fio's summary and
# dmsetup status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"
bash scripts/setup-host.sh
bash scripts/build-kernel.sh
bash scripts/build-module.sh "$KBUILD" "$RAINSSD_CACHE/mod-6.12" >/dev/null
bash scripts/vm-run.sh --kernel test -- bash scripts/demo-in-vm.sh "$RAINSSD_CACHE/mod-6.12" 2>&1 | tr -d '\r'
exit "${PIPESTATUS[0]}"
