# Shared by the examples/train-*.sh scripts: the papers' models and training settings,
# options, and the fairseq-train call. A dataset script sets DATASET (a name for the
# checkpoint folder), DATA (the recipe's OUTDIR), SRC, TGT, SIZES (the sizes it offers, first
# the default: small, or base and big) and SHARE (--share-all-embeddings with a joined
# dictionary, else --share-decoder-input-output-embed), then calls `train_main "$@"`.
#
# Options (all dataset scripts):
#   --model M        transformer | dpe | xlpe-combination (or xlpe) | xlpe-inxl | xlpe-headxl |
#                    re-encoder | re-decoder | re-both (required),
#                    or a baseline: transformer-8e | transformer-10e (DPE Table 5) |
#                    encoder-free | encoder-free-inxl | encoder-free-nopos |
#                    encoder-free-relpe | lstm (XL PE Table 4) | relpe | rope | alibi | t5-bias
#                    (position baselines: Shaw et al. 2018, RoPE, ALiBi, T5's bias)
#   --size S         one of the dataset's SIZES
#   --gpus N         GPUs on this node; N > 1 trains with DDP, fairseq spawning one process
#                    per GPU (--distributed-world-size N). With --sbatch: GPUs per node, one
#                    SLURM task each (on the CPU, -- --cpu: processes per node, over gloo)
#   --nodes N        with --sbatch: nodes the one model trains on (default 1); the batch
#                    stays the paper's, --update-freq over N x --gpus processes
#   --sbatch         print an sbatch script instead of training: the same command, schedule
#                    and outputs in SAVE_DIR (train.log, schedule.env, provenance.json), its
#                    processes started by srun and joined by fairseq's own SLURM
#                    initialization (--distributed-port); submit it with
#                    `sbatch [--partition P --time T ...] SCRIPT` (docs/cluster.md)
#   --fp16 | --bf16  mixed precision
#   --schedule S     dpe-iwslt | dpe | re | xlpe: whose paper's schedule (optimization, batch,
#                    checkpoints, and what evaluate.sh decodes with; see set_schedule). Default:
#                    dpe-iwslt at the small size, else the model's paper (default_schedule)
#   --update-freq K  accumulate K batches per update (default: the paper's batch, BATCH_GPUS
#                    x --max-tokens, over --gpus)
#   --max-update U | --warmup N | --lr LR | --max-tokens T   override the schedule's value;
#                    a --max-update below the schedule's also shrinks its warm-up (unless
#                    --warmup is given) and checkpoint interval in proportion, so that a short
#                    run still warms up and saves checkpoints for evaluate.sh to average
#   --save-dir DIR   checkpoints (default: checkpoints/DATASET/MODEL-SIZE)
#   --dry-run        print the fairseq-train command instead of running it
#   --restart        start afresh in a --save-dir that holds a run (another model's, or one
#                    trained on data prepared anew since): the earlier run is moved into
#                    SAVE_DIR/replaced-TIME, nothing deleted. Without it, a folder of another
#                    run is refused in one line, and one of this run resumes
#   -- ARGS          passed on to fairseq-train (later flags win in fairseq's parser)
#
# Every value is checked before anything runs. The effective schedule is printed on stderr
# at the start; its name and the model go to SAVE_DIR/schedule.env, from which
# examples/evaluate.sh takes the checkpoint (average or best), beam and length penalty.
# The data-bin must be its OUT's as prepared (OUT/provenance.json); OUT is read under a shared
# lock and SAVE_DIR written under its own; after training, SAVE_DIR/provenance.json records
# model, size, schedule and data (docs/input-rules.md, "Provenance").

source "$(dirname "${BASH_SOURCE[0]}")/../data_prep/options.sh"

MODELS="transformer dpe xlpe xlpe-combination xlpe-inxl xlpe-headxl re-encoder re-decoder re-both transformer-8e transformer-10e encoder-free encoder-free-inxl
encoder-free-nopos encoder-free-relpe lstm relpe rope alibi t5-bias"

USER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/xlpe_fairseq

# The DPE paper's IWSLT'14 size for every model (§4.2: dim 256, FFN 1024, 2+2 layers,
# 2 heads), so that all models compare at one size.
SMALL_DIMS=(
    --encoder-embed-dim 256 --encoder-ffn-embed-dim 1024 --encoder-layers 2
    --encoder-attention-heads 2 --decoder-embed-dim 256 --decoder-ffn-embed-dim 1024
    --decoder-layers 2 --decoder-attention-heads 2
)

# The schedule families: each paper's optimization, batch, checkpointing and decoding.
SCHEDULES="dpe-iwslt dpe re xlpe"

# default_schedule SIZE MODEL: the schedule of the paper a model comes from. The small size is
# IWSLT-sized data, which only the DPE paper trained on: every model takes its IWSLT setup there.
# The plain transformer is every paper's baseline: DPE's at base, XL PE's Transformer big at big
# (pass --schedule re for the Reordering Embeddings paper's baselines).
default_schedule() {
    local size=$1 model=$2
    if [[ $size == small ]]; then
        echo dpe-iwslt
        return
    fi
    case $model in
        re-*) echo re ;;
        xlpe | xlpe-* | encoder-free* | lstm) echo xlpe ;;
        # the position baselines compare with the Transformer on its schedule
        transformer | relpe | rope | alibi | t5-bias) [[ $size == big ]] && echo xlpe || echo dpe ;;
        *) echo dpe ;;
    esac
}

# set_schedule NAME SIZE: the schedule's numbers (WARMUP, MAX_UPDATE, BATCH_GPUS, MAX_TOKENS,
# LR, DROPOUT, WEIGHT_DECAY, INTERVAL, KEEP), what examples/evaluate.sh decodes with (AVERAGE:
# how many of the last checkpoints to average, 0 for checkpoint_best.pt; BEAM; LENPEN),
# SCHEDULE_EXTRA (further fairseq-train flags) and SCHEDULE_SOURCE (where the numbers come
# from). Fails for an unknown name.
set_schedule() {
    local name=$1 size=$2
    MAX_TOKENS=4096 WEIGHT_DECAY=0.0 SCHEDULE_EXTRA=()
    # the model size's own learning rate and dropout where a paper gives none: fairseq's
    # IWSLT'14 settings (small), Transformer base/big (Vaswani et al. 2017; fairseq's WMT runs)
    case $size in
        small) LR=5e-4 DROPOUT=0.3 ;;
        base) LR=7e-4 DROPOUT=0.1 ;;
        big) LR=5e-4 DROPOUT=0.3 ;;
    esac
    case $name in
        dpe-iwslt)
            # DPE §4.2: 15k updates, a validation every 1000 updates, the last 5 checkpoints
            # averaged. Silent on warmup, batch and beam: fairseq's IWSLT'14 settings (warmup
            # 4000, 4096 tokens on 1 GPU) and DPE's WMT beam 5.
            SCHEDULE_SOURCE="DPE (Zheng et al. 2021) §4.2, IWSLT'14"
            WARMUP=4000 MAX_UPDATE=15000 BATCH_GPUS=1 INTERVAL=1000 KEEP=5
            AVERAGE=5 BEAM=5 LENPEN=1.0 WEIGHT_DECAY=0.0001 ;;
        dpe)
            # DPE §4.2: 8 V100, 300k updates, a validation every 2k, the last 5 checkpoints
            # averaged, beam 5. Silent on warmup, learning rate and length penalty: the
            # authors' published command (github.com/jy6zheng/DynamicPositionEncodingModule:
            # --warmup-updates 8000 --lr 0.0007 --max-tokens 4096 on 8 GPUs, --lenpen 0.6;
            # it stops at 288k updates, the paper says 300k).
            SCHEDULE_SOURCE="DPE (Zheng et al. 2021) §4.2 and the authors' command"
            WARMUP=8000 MAX_UPDATE=300000 BATCH_GPUS=8 INTERVAL=2000 KEEP=5
            AVERAGE=5 BEAM=5 LENPEN=0.6 ;;
        re)
            # Reordering Embeddings (Chen et al. 2019) §6.3: 4096 x 4 tokens a batch, warmup
            # 8000, 200k updates, a validation every 1000, the checkpoint with the best dev BLEU,
            # beam 4, residual and attention dropout 0.1 (said for base; big keeps 0.3).
            # Silent on the learning rate: the size's.
            SCHEDULE_SOURCE="Reordering Embeddings (Chen et al. 2019) §6.3"
            WARMUP=8000 MAX_UPDATE=200000 BATCH_GPUS=4 INTERVAL=1000 KEEP=5
            AVERAGE=0 BEAM=4 LENPEN=1.0
            SCHEDULE_EXTRA=(
                --attention-dropout 0.1 --eval-bleu --eval-bleu-args '{"beam": 4}'
                --eval-bleu-detok moses --eval-bleu-detok-args "{\"target_lang\": \"$TGT\"}"
                --eval-bleu-remove-bpe --best-checkpoint-metric bleu
                --maximize-best-checkpoint-metric
            ) ;;
        xlpe)
            # XL PE (Ding et al. 2020) §4 says only Transformer big on four V100 (OpenNMT).
            # The rest is its Table 1 baseline's, Transformer big of Vaswani et al. (2017)
            # §5.3, §6.1: warmup 4000, 300k updates, the last 20 checkpoints averaged, beam 4,
            # length penalty 0.6; 4096 tokens on each of the 4 GPUs. 20 big checkpoints with
            # their optimizer state take about 70 GB.
            SCHEDULE_SOURCE="XL PE (Ding et al. 2020) §4, else Transformer big (Vaswani et al. 2017)"
            WARMUP=4000 MAX_UPDATE=300000 BATCH_GPUS=4 INTERVAL=1000 KEEP=20
            AVERAGE=20 BEAM=4 LENPEN=0.6 ;;
        *)
            echo "unknown schedule '$name': $SCHEDULES" >&2
            return 2 ;;
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
            # --order-lambda is the weight of the order loss, (1 - lambda) CE + lambda L_order,
            # as the DPE paper's text ("the weight of the reordering loss", "position loss
            # weight") and the authors' code have it; its Eq. 2 prints the weights the other
            # way round. The paper's values: 0.3 on IWSLT'14 (§4.5), 0.5 on WMT'14 (§4.4,
            # Table 4). Other data take the value of their size: 0.3 for the IWSLT-sized
            # (small: LibreOffice), 0.5 for the WMT-sized (base/big: ASPEC, WMT'17).
            if [[ $size == small ]]; then
                MODEL_FLAGS=(--arch transformer_dpe --order-lambda 0.3)
            else
                MODEL_FLAGS=(--arch "transformer_dpe${arch_suffix}" --order-lambda 0.5)
            fi ;;
        xlpe | xlpe-combination | xlpe-inxl | xlpe-headxl)
            # XL PE §3.2: InXL, HeadXL or both (Combination, the paper's best and xlpe's);
            # tau = 4 heads read PE_XL (§4, Fig. 3), at the small size 1 of 2
            local mode=${model#xlpe-}
            [[ $mode == xlpe ]] && mode=combination
            MODEL_FLAGS=(--arch "transformer_xlpe${arch_suffix}" --xlpe-mode "$mode")
            [[ $size == small ]] && MODEL_FLAGS+=(--xlpe-heads 1) ;;
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
        encoder-free-nopos | encoder-free-relpe)
            # XL PE Table 4: no source positions (noEnc-noPos), then + Shaw relative PE in the
            # decoder's self-attention; the decoder keeps its absolute PE in both
            local relative=none
            [[ $model == encoder-free-relpe ]] && relative=decoder
            MODEL_FLAGS=(--arch "transformer_relpe${arch_suffix}" --encoder-layers 0
                         --relative-positions-in "$relative" --absolute-positions decoder) ;;
        relpe | rope | alibi)
            MODEL_FLAGS=(--arch "transformer_${model}${arch_suffix}") ;;
        t5-bias)
            MODEL_FLAGS=(--arch "transformer_t5_bias${arch_suffix}") ;;
        lstm)
            # XL PE Table 4's LSTM (6 layers of 1024) at base and big; at the small size the
            # small Transformer's width and depth. fairseq's lstm has no FFN or head options.
            dims=()
            MODEL_FLAGS=(--arch lstm_6l_wmt_en_de)
            if [[ $size == small ]]; then
                local side
                for side in encoder decoder; do
                    MODEL_FLAGS+=("--$side-embed-dim" 256 "--$side-hidden-size" 256 "--$side-layers" 2)
                done
                MODEL_FLAGS+=(--decoder-out-embed-dim 256)
            fi ;;
        *)
            echo "unknown model '$model': $MODELS" >&2
            return 2 ;;
    esac
    # the size first, so that a model's own layer count (the baselines') wins
    MODEL_FLAGS=("${dims[@]}" "${MODEL_FLAGS[@]}")
}

# model_data_bin MODEL: which of the recipe's data-bin variants the model reads, under
# DATA_BIN (default: DATA/data-bin).
model_data_bin() {
    local root=${DATA_BIN:-$DATA/data-bin}
    case $1 in
        dpe) echo "$root/dpe" ;;
        xlpe | xlpe-* | encoder-free-inxl) echo "$root/xlpe" ;;
        *) echo "$root/text" ;;
    esac
}

# what trains, for the printout: fairseq trains on the CPU where no GPU is visible
device_label() {
    if (($1 == 1)) && { [[ ! -e /dev/nvidiactl ]] || [[ ${CUDA_VISIBLE_DEVICES-unset} == "" ]]; }; then
        echo "the CPU"
    else
        echo "$1 GPU(s)"
    fi
}

train_main() {
    local model="" size=${SIZES%% *} gpus=1 precision=() update_freq="" schedule=""
    local max_update="" warmup="" lr="" max_tokens="" save_dir="" dry_run=0 restart=0 extra=()
    local nodes=1 sbatch=0
    local name prog
    prog=$(basename "$0")
    # each value checked as it is read, an empty one too, before anything runs
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model | --size | --schedule | --gpus | --nodes | --update-freq | --max-update | \
                    --warmup | --lr | --max-tokens | --save-dir)
                need_value "$1" $# || return ;;&
            --model) model=$2; shift 2 ;;
            --size) size=$2; shift 2 ;;
            --schedule)
                # shellcheck disable=SC2086 # a list of words
                check_choice --schedule "$2" $SCHEDULES || return
                schedule=$2
                shift 2 ;;
            --gpus | --nodes | --update-freq | --max-update | --warmup | --max-tokens)
                # counts, read as decimals (bash arithmetic takes 08 for a bad octal number)
                check_whole "$1" "$2" 1 || return
                name=${1#--}
                printf -v "${name//-/_}" %s "$WHOLE"
                shift 2 ;;
            --lr)
                check_positive --lr "$2" || return
                lr=$2
                shift 2 ;;
            --save-dir)
                if [[ -z $2 ]]; then
                    echo "--save-dir must name a folder, not ''" >&2
                    return 2
                fi
                save_dir=$2
                shift 2 ;;
            --fp16) precision=(--fp16); shift ;;
            --bf16) precision=(--bf16); shift ;;
            --dry-run) dry_run=1; shift ;;
            --sbatch) sbatch=1; shift ;;
            --restart) restart=1; shift ;;
            --) shift; extra+=("$@"); break ;;
            *)
                # examples/train.sh passes whatever is not an option here on to fairseq-train
                if ((${PASS_UNKNOWN:-0})); then
                    extra+=("$1")
                    shift
                else
                    echo "unknown option $1 (see examples/train_common.sh)" >&2
                    return 2
                fi ;;
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
    if ((nodes > 1 && !sbatch)); then
        echo "--nodes $nodes: several nodes train through SLURM; add --sbatch" >&2
        return 2
    fi
    if ((gpus > 1 && !dry_run && !sbatch)); then
        # more processes than GPUs fail only once fairseq starts them (--dry-run and --sbatch
        # print for another machine)
        local visible
        visible=$(python -c 'import torch; print(torch.cuda.device_count())')
        if ((visible == 0)); then
            echo "--gpus must be 1 on a machine without GPUs (training on the CPU), not" \
                "'$gpus'" >&2
            return 2
        fi
        check_whole --gpus "$gpus" 1 "$visible" || return
    fi
    set_model "$size" "$model"
    schedule=${schedule:-$(default_schedule "$size" "$model")}
    set_schedule "$schedule" "$size"
    # a shorter budget than the schedule's is the schedule in proportion: otherwise a first run
    # of a few hundred updates ends deep in the warm-up and before its first checkpoint
    local shortened=""
    if [[ -n $max_update ]] && ((max_update < MAX_UPDATE)); then
        shortened="  --max-update $max_update is below the schedule's $MAX_UPDATE:"
        if [[ -z $warmup ]]; then
            WARMUP=$(((WARMUP * max_update + MAX_UPDATE / 2) / MAX_UPDATE))
            ((WARMUP >= 1)) || WARMUP=1
            shortened+=" warm-up and"
        fi
        INTERVAL=$((INTERVAL * max_update / MAX_UPDATE))
        ((INTERVAL >= 1)) || INTERVAL=1
        shortened+=" checkpoint interval shrunk in proportion"
    fi
    MAX_UPDATE=${max_update:-$MAX_UPDATE} WARMUP=${warmup:-$WARMUP}
    LR=${lr:-$LR} MAX_TOKENS=${max_tokens:-$MAX_TOKENS}
    # every process of every node trains on a share of the batch
    local world=$((nodes * gpus)) cpu=0 distributed=()
    [[ " ${extra[*]} " != *" --cpu "* ]] || cpu=1
    if ((sbatch && cpu)); then
        # DDP of CPU modules: over gloo, and with fairseq's own bucketing (legacy_ddp), as its
        # c10d hands PyTorch the GPU-only device_ids
        distributed=(--distributed-backend gloo --ddp-backend legacy_ddp)
    fi
    # fewer GPUs than the paper's accumulate gradients to keep its batch size
    update_freq=${update_freq:-$(((BATCH_GPUS + world - 1) / world))}
    save_dir=${save_dir:-checkpoints/$DATASET/$model-$size}
    local bin
    bin=$(model_data_bin "$model")
    # --required-batch-size-multiple 1: fairseq drops the last batch of a split unless its
    # size is a multiple of this (8), and with it all of a split under 8 sentences
    local command=(
        fairseq-train "$bin" --user-dir "$USER_DIR" --task translation_reorder
        --source-lang "$SRC" --target-lang "$TGT"
        --criterion label_smoothed_cross_entropy_with_order --label-smoothing 0.1
        "${MODEL_FLAGS[@]}" "$SHARE"
        --optimizer adam --adam-betas "(0.9, 0.98)" --clip-norm 0.0 --lr "$LR"
        --lr-scheduler inverse_sqrt --warmup-updates "$WARMUP" --warmup-init-lr 1e-07
        --dropout "$DROPOUT" --weight-decay "$WEIGHT_DECAY" --max-tokens "$MAX_TOKENS"
        --max-update "$MAX_UPDATE" --save-interval-updates "$INTERVAL"
        --validate-interval-updates "$INTERVAL" --keep-interval-updates "$KEEP"
        --no-epoch-checkpoints --required-batch-size-multiple 1 "${SCHEDULE_EXTRA[@]}"
        --update-freq "$update_freq" --distributed-world-size "$world"
        --save-dir "$save_dir" --log-format simple --log-interval 100 "${precision[@]}"
        "${distributed[@]}" "${extra[@]}"
    )
    # what evaluate.sh will find: the checkpoints of every INTERVAL updates, KEEP of them kept
    local saved=$((MAX_UPDATE / INTERVAL))
    ((saved <= KEEP)) || saved=$KEEP
    local evaluation="the last $AVERAGE checkpoints averaged"
    ((AVERAGE > 0)) || evaluation="the checkpoint with the best dev BLEU"
    if ((AVERAGE > saved)); then
        evaluation="the $saved checkpoints saved averaged, not $AVERAGE"
        ((saved >= 2)) || evaluation="checkpoint_best.pt (fewer than 2 checkpoints saved)"
    fi
    # on stderr, so that --dry-run prints nothing but the command on stdout
    {
        # the model first: the schedule is borrowed from a paper, often not the model's own
        echo "training $model, size $size, on the schedule $schedule (from $SCHEDULE_SOURCE):"
        [[ -z $shortened ]] || echo "$shortened"
        echo "  $MAX_UPDATE updates, warmup $WARMUP, lr $LR, dropout $DROPOUT; a batch of" \
            "$MAX_TOKENS tokens x $((world * update_freq)) ($(device_label "$world") x" \
            "update-freq $update_freq; the paper's: x $BATCH_GPUS)"
        echo "  validation and a checkpoint every $INTERVAL updates; evaluate.sh: $evaluation," \
            "beam $BEAM, lenpen $LENPEN"
        ((${#extra[@]} == 0)) || echo "  then, overriding any of these: ${extra[*]}"
    } >&2
    if ((dry_run)); then
        printf '%q ' "${command[@]}"
        echo
        return
    fi
    if [[ ! -e $bin/dict.$SRC.txt ]]; then
        echo "$bin/dict.$SRC.txt: no such file; run the data_prep recipe into $DATA first" >&2
        return 1
    fi
    if ((sbatch)); then
        # the corpus checked now, on the machine that submits
        xlpe-provenance verify-corpus --prog "$prog" "$DATA" --data-bin "${bin##*/}" || return 1
        sbatch_script "$model" "$size" "$schedule" "$nodes" "$gpus" "$cpu" "$save_dir" "$bin" \
            "${command[@]}"
        return
    fi
    # the data-bin as prepared (OUT's record), read while no preparation rewrites it
    claim_folder "$prog" read "$DATA" "the corpus (OUT)"
    xlpe-provenance verify-corpus --prog "$prog" "$DATA" --data-bin "${bin##*/}" || return 1
    claim_folder "$prog" write "$save_dir" "the checkpoints (CHECKPOINT_DIR)"
    if ((restart)); then
        set_aside_run "$save_dir"
    fi
    # a folder of another model's checkpoints is refused, not relabeled; fairseq-train then
    # refuses a checkpoint_last.pt of other data or parameters (tasks/data_provenance.py)
    local trained_before="" schedule_before="" has_checkpoints=0
    ! compgen -G "$save_dir/checkpoint*.pt" >/dev/null || has_checkpoints=1
    if [[ -f $save_dir/schedule.env ]] && ((has_checkpoints)); then
        trained_before=$(sed -n 's/^TRAINED_MODEL=//p' "$save_dir/schedule.env")
        schedule_before=$(sed -n 's/^SCHEDULE=//p' "$save_dir/schedule.env")
        if [[ $trained_before != "$model" || $schedule_before != "$schedule" ]]; then
            echo "$prog: $save_dir holds the checkpoints of $trained_before on the schedule" \
                "$schedule_before (its schedule.env), not of $model on $schedule: train into" \
                "another folder, or pass --restart to start afresh (the old run is kept in" \
                "a subfolder)" >&2
            return 1
        fi
    fi
    # which schedule examples/evaluate.sh decodes this model with: written now into a folder
    # of this run, so that an interrupted training can be evaluated; else once it succeeded
    if [[ -n $trained_before ]] || ((!has_checkpoints)); then
        write_schedule "$save_dir" "$schedule" "$model"
    fi
    local status=0
    # torch >= 2.6 loads checkpoints weights-only, which fairseq's resume cannot (design.md)
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 "${command[@]}" 2>&1 | tee -a "$save_dir/train.log" ||
        status=$?
    ((status == 0)) || return "$status"
    write_schedule "$save_dir" "$schedule" "$model"
    xlpe-provenance training --prog "$prog" "$save_dir" --data-bin "$bin" --model "$model" \
        --size "$size" --schedule "$schedule" -- "${command[@]}"
}

# sbatch_script MODEL SIZE SCHEDULE NODES TASKS_PER_NODE CPU SAVE_DIR BIN COMMAND...: on stdout,
# an sbatch script that runs COMMAND as NODES x TASKS_PER_NODE processes of one training,
# with the records of a local run.
sbatch_script() {
    local model=$1 size=$2 schedule=$3 nodes=$4 tasks=$5 cpu=$6 save_dir=$7 bin=$8 prog
    shift 8
    prog=$(basename "$0")
    local launch=(srun --kill-on-bad-exit=1)
    if ((cpu)); then
        # fairseq's SLURM path makes SLURM_LOCALID the CUDA device and sets it even with
        # --cpu, which fails on a CPU build: on the CPU every process is device 0
        launch+=(bash -c 'SLURM_LOCALID=0 exec "$@"' fairseq-train)
    fi
    echo "#!/bin/bash"
    echo "# $prog: $model, size $size, schedule $schedule, on $nodes node(s) x $tasks" \
        "process(es); submit with: sbatch [--partition P --time T ...] THIS_SCRIPT"
    echo "#SBATCH --job-name=xlpe-$model-$size"
    echo "#SBATCH --nodes=$nodes"
    echo "#SBATCH --ntasks-per-node=$tasks"
    ((cpu)) || echo "#SBATCH --gpus-per-node=$tasks"
    # a preempted job starts again, and fairseq-train resumes from checkpoint_last.pt
    echo "#SBATCH --requeue"
    echo "#SBATCH --open-mode=append"
    echo "set -euo pipefail"
    printf 'cd %q\n' "$PWD"
    echo "export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1"
    printf 'mkdir -p -- %q\n' "$save_dir"
    printf "printf 'SCHEDULE=%%s\\\\nTRAINED_MODEL=%%s\\\\n' %q %q >%q\n" "$schedule" "$model" \
        "$save_dir/schedule.env"
    echo "# fairseq's SLURM initialization (--distributed-port): rank SLURM_PROCID, device"
    echo "# SLURM_LOCALID, rank 0's address the job's first node; a port of this job's"
    echo 'port=$((20000 + SLURM_JOB_ID % 20000))'
    printf '%q ' "${launch[@]}" "$@"
    printf -- '--distributed-port "$port" 2>&1 | tee -a %q\n' "$save_dir/train.log"
    printf '%q ' xlpe-provenance training --prog "$prog" "$save_dir" --data-bin "$bin" \
        --model "$model" --size "$size" --schedule "$schedule" -- "$@"
    echo
}

# write_schedule SAVE_DIR SCHEDULE MODEL: SAVE_DIR/schedule.env, written atomically.
write_schedule() {
    printf 'SCHEDULE=%s\nTRAINED_MODEL=%s\n' "$2" "$3" >"$1/.schedule.env.tmp"
    mv -- "$1/.schedule.env.tmp" "$1/schedule.env"
}

# set_aside_run SAVE_DIR: --restart: SAVE_DIR's earlier run (checkpoints, records, outputs)
# moved into SAVE_DIR/replaced-TIME, nothing deleted, so that the new run starts afresh.
set_aside_run() {
    local save_dir=$1 aside files=()
    mapfile -t files < <(find "$save_dir" -mindepth 1 -maxdepth 1 ! -name .xlpe-lock \
        ! -name 'replaced-*')
    ((${#files[@]})) || return 0
    printf -v aside '%s/replaced-%(%Y%m%d-%H%M%S)T' "$save_dir" -1
    mkdir -p -- "$aside"
    mv -- "${files[@]}" "$aside/"
    echo "$(basename "$0"): --restart: the earlier run in $save_dir moved to $aside" >&2
}
