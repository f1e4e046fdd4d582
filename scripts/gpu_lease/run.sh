#!/usr/bin/env bash
# On a lent GPU machine, in the repository root, as one device command: install what
# scripts/gpu_lease/pack.sh put in .whl (carry .whl and .lease), then the plugin, run one
# prepared lease command, and bring back what it wrote, checkpoints left out.
#
#   scripts/gpu_lease/run.sh NAME COMMAND...
#
# COMMAND runs with CORPUS (the packed corpus, .lease/corpus), GRID (grid.sh's DATA,
# .lease/grid) and RESULTS (/tmp/lease/NAME; LEASE_RESULTS replaces /tmp/lease) in its
# environment, for at most LEASE_SECONDS (540, within a device command's 600), then gets
# SIGTERM: xlpe-study then stops its runs and exits, and what they had written still comes
# back. RESULTS is kept on the machine: while it is warm, the same call again resumes an
# xlpe-study from its runs' last checkpoints. $OUT gets NAME.tar.gz (RESULTS without *.pt, the
# command's log and device.txt, the GPU and the stack it ran on) and, where RESULTS has them at
# its top or one folder down, report.md and curves.png. For example:
#
#   scripts/gpu_lease/run.sh inxl-seed1 \
#       bash -c 'docs/results/inxl-at-scale/lease.sh 1 "$CORPUS" "$RESULTS/work"'
#
# KIT and SITE (/tmp/site, where pip installs) as in pack.sh; a CPU dry run puts a Python
# without fairseq first on PATH.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    # the header comment above, the script's documentation
    sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
if [[ $# -lt 2 ]]; then
    echo "usage: $0 NAME COMMAND..." >&2
    exit 2
fi
NAME=$1
shift
cd "$(dirname "$0")/../.."
KIT=${KIT:-$PWD}
SITE=${SITE:-/tmp/site}
OUT=${OUT:?"run.sh: OUT, the folder that comes back, is not set (run it through the device tool)"}
shopt -s nullglob
# one pip call: a second into the same --target leaves the first one's bin/ as it was
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target "$SITE" "$KIT"/.whl/*.whl . || exit 1
shopt -u nullglob
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} PATH=$SITE/bin:$PATH PYTHONUNBUFFERED=1
export CORPUS=$KIT/.lease/corpus GRID=$KIT/.lease/grid
export RESULTS=${LEASE_RESULTS:-/tmp/lease}/$NAME
mkdir -p "$RESULTS"
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null \
        || echo "no nvidia-smi"
    python3 -W ignore -c 'import platform, torch, fairseq, sacrebleu
print(f"Python {platform.python_version()}, torch {torch.__version__}, fairseq",
      f"{fairseq.__version__}, sacreBLEU {sacrebleu.__version__},",
      f"CUDA available: {torch.cuda.is_available()}")'
    echo "$(nproc --all) cores"
} >"$RESULTS/device.txt" 2>&1
started=$(date +%s)
timeout -s TERM -k 30 "${LEASE_SECONDS:-540}" "$@" >>"$RESULTS/command.log" 2>&1
status=$?
echo "run.sh: exit $status after $(( $(date +%s) - started )) s" >>"$RESULTS/command.log"
tar -czf "$OUT/$NAME.tar.gz" --exclude='*.pt' -C "${RESULTS%/*}" "$NAME"
for file in report.md curves.png; do
    found=$(find "$RESULTS" -maxdepth 2 -name "$file" | head -1)
    [[ -n $found ]] && cp "$found" "$OUT/$NAME.$file"
done
tail -5 "$RESULTS/command.log"
exit "$status"
