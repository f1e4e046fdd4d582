# The demo's model size and training settings, sourced by examples/demo.sh, two_pass.sh and
# noise_attack.sh so that every row they report is trained identically.
#
# demo_settings UPDATES: sets the array DEMO_SETTINGS (fairseq-train options without data,
# languages, architecture or device).

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
