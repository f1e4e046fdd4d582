# The demo's model size and training settings, sourced by examples/demo.sh, two_pass.sh and
# noise_attack.sh so that every row they report is trained identically.
#
# demo_settings UPDATES: sets the array DEMO_SETTINGS (fairseq-train options without data,
# languages, architecture or device).
#
# Sourcing it also fixes what else decides a CPU run's numbers, for every command started
# after it (fairseq-train, fairseq-generate). Torch splits each matrix product and reduction
# among its threads, and another split rounds differently: by default it takes one thread per
# core it may run on, and on the demo's data 1 and 2 threads (`taskset -c 0` against a plain
# run) give different weights after 30 updates. The kernels' instruction set does too:
# AVX-512 and AVX2 kernels give different weights after 30 updates here. With a fixed thread
# count and AVX2 kernels a run depends on neither the cores nor the CPU generation (the
# README's numbers are from DEMO_THREADS=2; other values run as well, with other numbers).
# MKL_DYNAMIC=FALSE: else MKL, and torch with it, takes no more threads than physical cores
# (one on a 2-vCPU machine with hyperthreading).
DEMO_THREADS=${DEMO_THREADS:-2}
export OMP_NUM_THREADS=$DEMO_THREADS MKL_NUM_THREADS=$DEMO_THREADS MKL_DYNAMIC=FALSE
export ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2

DEMO_UPDATES=500

demo_settings() {
    # Half the width of the DPE paper's IWSLT models (§4.2: 256/1024, 2+2 layers): twice as
    # fast on 2 CPU cores, which buys the demo twice the updates. 4 heads, so XL PE's tau = 1
    # is the paper's best share of heads (4 of 16, Ding et al. 2020, Fig. 3).
    DEMO_SETTINGS=(
        --encoder-embed-dim 128 --encoder-ffn-embed-dim 512 --encoder-layers 2 --encoder-attention-heads 4
        --decoder-embed-dim 128 --decoder-ffn-embed-dim 512 --decoder-layers 2 --decoder-attention-heads 4
        --share-decoder-input-output-embed --dropout 0.2
        --criterion label_smoothed_cross_entropy_with_order --label-smoothing 0.1
        --optimizer adam --adam-betas "(0.9, 0.98)" --lr 0.002 --lr-scheduler inverse_sqrt
        --warmup-updates 200 --max-tokens 4096 --max-update "$1" --seed 1
        --no-epoch-checkpoints --log-format simple --log-interval 50 --num-workers 0
    )
}
