#!/usr/bin/env bash
# En->Tr InXL (identity init, cpu-demo, 1000 updates, 3 seeds: the study S) decoded with the
# old default preorderer's positions (the study's own outputs, best1), the preorderer the
# recipe now trains by default (work/lo-en-tr-new: its best reordering and its 4 best), and
# oracle / monotone positions (examples/position_sets.sh). Run from the repository root with
# the venv active; W receives hypotheses/ROW/seedS.txt for ../../preorderer-tr-en/shares.py.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
W=${W:-work/entr-shares}/hypotheses; S=${S:-work/study-inxl-init-cpu}; U=$(xlpe-user-dir)
mkdir -p $W/best1 $W/oracle $W/monotone $W/new-best1 $W/new-nbest4
decode() {  # ROW SEED DATA [options]
  local row=$1 seed=$2 data=$3; shift 3
  local out=${W%/hypotheses}/$row.seed$seed
  fairseq-generate $data --user-dir $U --task translation_reorder --source-lang en --target-lang tr \
    --gen-subset test --path $S/runs/xlpe-inxl/seed$seed/checkpoints/checkpoint_last.pt --beam 5 \
    --batch-size 100 --required-batch-size-multiple 1 --remove-bpe --num-workers 0 --cpu "$@" \
    > $out.out 2> $out.log
  xlpe-bleu --generate-output $out.out --reference work/lo-en-tr/raw/test.tr --target-lang tr \
    --detokenized-output $W/$row/seed$seed.txt > $out.bleu 2>&1
}
for seed in 1 2 3; do
  cp $S/hypotheses/xlpe-inxl/seed$seed.txt $W/best1/seed$seed.txt
  decode oracle $seed work/lo-en-tr/sets/oracle &
  decode monotone $seed work/lo-en-tr/sets/monotone; wait
  decode new-best1 $seed work/lo-en-tr/data-bin/text --preorderer work/lo-en-tr-new/preorderer.pt &
  decode new-nbest4 $seed work/lo-en-tr/data-bin/text --preorderer work/lo-en-tr-new/preorderer.pt --preorderer-nbest 4; wait
done
