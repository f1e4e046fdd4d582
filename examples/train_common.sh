# Shared by the examples/train-*.sh scripts: the papers' models and training settings,
# options, and the fairseq-train call. A dataset script sets DATASET (a name for the
# checkpoint folder), DATA (the recipe's OUTDIR), SRC, TGT, SIZES (the sizes it offers, first
# the default: small, or base and big) and SHARE (--share-all-embeddings with a joined
# dictionary, else --share-decoder-input-output-embed), then calls `train_main "$@"`.
#
# Options (all dataset scripts):
#   --model M        transformer | dpe | xlpe | re-encoder | re-decoder | re-both (required),
#                    or a baseline: transformer-8e | transformer-10e (DPE Table 5) |
#                    encoder-free | encoder-free-inxl (XL PE Table 4)
#   --size S         one of the dataset's SIZES
#   --gpus N         GPUs on this node; N > 1 trains with DDP, fairseq spawning one process
#                    per GPU (--distributed-world-size N). For several nodes, run the command
#                    that --dry-run prints under torchrun (fairseq reads its RANK/WORLD_SIZE).
#   --fp16 | --bf16  mixed precision
#   --update-freq K  accumulate K batches per update (default: the paper's batch, BATCH_GPUS
#                    x --max-tokens, over --gpus)
#   --max-update U   override the number of updates
#   --save-dir DIR   checkpoints (default: checkpoints/DATASET/MODEL-SIZE)
#   --dry-run        print the fairseq-train command instead of running it
#   -- ARGS          passed on to fairseq-train (later flags win in fairseq's parser)

MODELS="transformer dpe xlpe re-encoder re-decoder re-both transformer-8e transformer-10e encoder-free encoder-free-inxl"

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/xlpe_fairseq

# The DPE paper's IWSLT'14 size for every model (§4.2: dim 256, FFN 1024, 2+2 layers,
# 2 heads), so that all models compare at one size.
SMALL_DIMS=(
    --encoder-embed-dim 256 --encoder-ffn-embed-dim 1024 --encoder-layers 2
    --encoder-attention-heads 2 --decoder-embed-dim 256 --decoder-ffn-embed-dim 1024
    --decoder-layers 2 --decoder-attention-heads 2
)

# set_training SIZE: PRESET (optimizer, schedule, checkpointing) and BATCH_GPUS.
set_training() {
    case $1 in
        small)
            # fairseq's IWSLT'14 settings; DPE §4.2: 15k updates, a validation every 1000
            # updates, the last 5 checkpoints averaged (keep-interval-updates)
            BATCH_GPUS=1
            PRESET=(
                --optimizer adam --adam-betas "(0.9, 0.98)" --clip-norm 0.0 --lr 5e-4
                --lr-scheduler inverse_sqrt --warmup-updates 4000 --dropout 0.3
                --weight-decay 0.0001 --max-tokens 4096 --max-update 15000
                --save-interval-updates 1000 --validate-interval-updates 1000
                --keep-interval-updates 5 --no-epoch-checkpoints
            ) ;;
        base | big)
            # Transformer base/big (Vaswani et al. 2017) with fairseq's WMT settings; a batch
            # of 8 GPUs x 4096 tokens (DPE: 8 V100); 300k updates (DPE §4.2); a validation and
            # a checkpoint every 2000 updates, the last 5 averaged (DPE)
            BATCH_GPUS=8
            PRESET=(
                --optimizer adam --adam-betas "(0.9, 0.98)" --clip-norm 0.0
                --lr-scheduler inverse_sqrt --warmup-updates 4000 --warmup-init-lr 1e-07
                --weight-decay 0.0 --max-tokens 4096 --max-update 300000
                --save-interval-updates 2000 --validate-interval-updates 2000
                --keep-interval-updates 5 --no-epoch-checkpoints
            )
            if [[ $1 == base ]]; then
                PRESET+=(--lr 7e-4 --dropout 0.1)
            else
                PRESET+=(--lr 5e-4 --dropout 0.3)
            fi ;;
    esac
}

# set_model SIZE MODEL: MODEL_FLAGS (architecture and model options); fails for an unknown model.
set_model() {
    local size=$1 model=$2 arch_suffix dims=()
    case $size in
        small) arch_suffix="" dims=("${SMALL_DIMS[@]}") ;;
        base) arch_suffix=_wmt_en_de ;;
        big) arch_suffix=_wmt_en_de_big ;;
    esac
    case $model in
        transformer)
            # fairseq's own architectures: transformer (small dims given), transformer_wmt_en_de*
            MODEL_FLAGS=(--arch "transformer${arch_suffix}") ;;
        dpe)
            # lambda: 0.3 on IWSLT (DPE §4.5), 0.5 on WMT (§4.4)
            MODEL_FLAGS=(--arch "transformer_dpe${arch_suffix}" --order-lambda 0.5)
            [[ $size == small ]] && MODEL_FLAGS=(--arch transformer_dpe --order-lambda 0.3) ;;
        xlpe)
            # Combination mode, tau = 4 heads (XL PE §4, Fig. 3); at the small size 1 of 2
            MODEL_FLAGS=(--arch "transformer_xlpe${arch_suffix}")
            [[ $size == small ]] && MODEL_FLAGS=(--arch transformer_xlpe --xlpe-heads 1) ;;
        re-encoder | re-decoder | re-both)
            MODEL_FLAGS=(--arch "transformer_reorder_emb${arch_suffix}" --reorder-emb "${model#re-}") ;;
        transformer-8e | transformer-10e)
            # DPE Table 5: 2 (8E) or 4 (10E) encoder layers more than the model's own
            local layers=${model//[!0-9]/}
            case $size in
                small) MODEL_FLAGS=(--arch transformer --encoder-layers $((layers - 4))) ;;
                base) MODEL_FLAGS=(--arch "transformer_${layers}e_wmt_en_de") ;;
                big) MODEL_FLAGS=(--arch transformer_wmt_en_de_big --encoder-layers "$layers") ;;
            esac ;;
        encoder-free)
            # XL PE Table 4: no encoder layers, embeddings with absolute PE to the decoder
            MODEL_FLAGS=(--arch "transformer${arch_suffix}" --encoder-layers 0) ;;
        encoder-free-inxl)
            # XL PE Table 4: the same with InXL PE
            MODEL_FLAGS=(--arch "transformer_xlpe${arch_suffix}" --xlpe-mode inxl --encoder-layers 0) ;;
        *)
            echo "unknown model '$model': $MODELS" >&2
            return 2 ;;
    esac
    # the size first, so that a model's own layer count (the baselines') wins
    MODEL_FLAGS=("${dims[@]}" "${MODEL_FLAGS[@]}")
}

# model_data_bin MODEL: which of the recipe's data-bin variants the model reads.
model_data_bin() {
    case $1 in
        dpe) echo "$DATA/data-bin/dpe" ;;
        xlpe | encoder-free-inxl) echo "$DATA/data-bin/xlpe" ;;
        *) echo "$DATA/data-bin/text" ;;
    esac
}

train_main() {
    local model="" size=${SIZES%% *} gpus=1 precision=() update_freq="" max_update=""
    local save_dir="" dry_run=0 extra=()
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model=$2; shift 2 ;;
            --size) size=$2; shift 2 ;;
            --gpus) gpus=$2; shift 2 ;;
            --fp16) precision=(--fp16); shift ;;
            --bf16) precision=(--bf16); shift ;;
            --update-freq) update_freq=$2; shift 2 ;;
            --max-update) max_update=$2; shift 2 ;;
            --save-dir) save_dir=$2; shift 2 ;;
            --dry-run) dry_run=1; shift ;;
            --) shift; extra=("$@"); break ;;
            *) echo "unknown option $1 (see examples/train_common.sh)" >&2; return 2 ;;
        esac
    done
    if [[ " $SIZES " != *" $size "* ]]; then
        echo "--size must be one of: $SIZES" >&2
        return 2
    fi
    if [[ -z $model ]]; then
        echo "--model is required: $MODELS" >&2
        return 2
    fi
    set_model "$size" "$model"
    set_training "$size"
    # fewer GPUs than the paper's accumulate gradients to keep its batch size
    update_freq=${update_freq:-$(((BATCH_GPUS + gpus - 1) / gpus))}
    save_dir=${save_dir:-checkpoints/$DATASET/$model-$size}
    local bin
    bin=$(model_data_bin "$model")
    local command=(
        fairseq-train "$bin" --user-dir "$USER_DIR" --task translation_reorder
        --source-lang "$SRC" --target-lang "$TGT"
        --criterion label_smoothed_cross_entropy_with_order --label-smoothing 0.1
        "${MODEL_FLAGS[@]}" "$SHARE" "${PRESET[@]}"
        --update-freq "$update_freq" --distributed-world-size "$gpus"
        --save-dir "$save_dir" --log-format simple --log-interval 100 "${precision[@]}"
    )
    if [[ -n $max_update ]]; then
        command+=(--max-update "$max_update")
    fi
    command+=("${extra[@]}")
    if ((dry_run)); then
        printf '%q ' "${command[@]}"
        echo
        return
    fi
    if [[ ! -e $bin/dict.$SRC.txt ]]; then
        echo "$bin/dict.$SRC.txt: no such file; run the data_prep recipe into $DATA first" >&2
        return 1
    fi
    mkdir -p "$save_dir"
    # torch >= 2.6 loads checkpoints weights-only, which fairseq's resume cannot (design.md)
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 "${command[@]}" 2>&1 | tee -a "$save_dir/train.log"
}
