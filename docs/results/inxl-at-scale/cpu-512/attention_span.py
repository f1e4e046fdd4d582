"""Where the encoder's self-attention looks, per layer: in source order and in the XL order.

    python docs/results/inxl-at-scale/cpu-512/attention_span.py XLPE_DATA_BIN NAME=CHECKPOINT...

For every checkpoint (a `transformer` or a `transformer_xlpe`) it encodes the valid split of
XLPE_DATA_BIN (the xlpe data-bin, whose positions give each source token's XL position) and
averages, over the real tokens of every sentence (EOS and padding left out as queries and as
keys, the weights renormalised over the rest), each layer's attention (mean of its heads):

- `near`: the share of attention on the token itself and its two neighbours in the source;
- `xl near`: the same in the XL order (keys whose XL position is within 1 of the query's);
- `dist`: the mean distance |i - j| in the source the attention spans; `xl dist` in XL positions.

An encoder that reads its sentence by source n-grams keeps `near` high; one that reads it by
the XL order moves attention to `xl near`. Layer `uniform` gives the four for attention spread
evenly over the sentence, the reference for an encoder that has not learned where to look.
Prints one Markdown table.
"""
import inspect
import os
import sys

import torch

from xlpe_fairseq.evaluation.attention_alignment import load_model, split_batches


def capture_self_attention(encoder):
    """Make every encoder layer's self-attention also hand its per-head weights to a list,
    which is returned (one ``(heads, B, T, T)`` tensor per layer and batch, in order)."""
    captured = []
    for layer in encoder.layers:
        attention = layer.self_attn
        forward = attention.forward

        def with_weights(*args, forward=forward, **kwargs):
            kwargs.update(need_weights=True, need_head_weights=True)
            output, weights = forward(*args, **kwargs)
            captured.append(weights)
            return output, weights

        attention.forward = with_weights
    return captured


def attention_span(model, batches):
    """{layer: {"near", "xl near", "dist", "xl dist"}} averaged over the real tokens, layers
    counted from 1; under "uniform" the same for attention spread evenly over the real keys."""
    captured = capture_self_attention(model.encoder)
    sums, tokens = {}, 0
    eos, pad = model.encoder.dictionary.eos(), model.encoder.padding_idx
    reads_positions = "reorder_positions" in inspect.signature(model.encoder.forward).parameters
    with torch.no_grad():
        for sample in batches:
            net_input = sample["net_input"]
            src_tokens, reorder = net_input["src_tokens"], sample["reorder_positions"]
            captured.clear()
            positions = {"reorder_positions": reorder} if reads_positions else {}
            model.encoder(src_tokens, net_input["src_lengths"], **positions)
            real = src_tokens.ne(pad) & src_tokens.ne(eos)
            source = real.long().cumsum(dim=1)
            pair = real.unsqueeze(2) & real.unsqueeze(1)
            distance = (source.unsqueeze(2) - source.unsqueeze(1)).abs().float()
            xl_distance = (reorder.unsqueeze(2) - reorder.unsqueeze(1)).abs().float()
            uniform = pair.float().unsqueeze(0)
            for layer, weights in [("uniform", uniform), *enumerate(captured, start=1)]:
                weights = weights.float().mean(dim=0) * pair
                weights = weights / weights.sum(dim=2, keepdim=True).clamp(min=1e-9)
                measures = {"near": (weights * (distance <= 1)).sum(dim=2),
                            "xl near": (weights * (xl_distance <= 1)).sum(dim=2),
                            "dist": (weights * distance).sum(dim=2),
                            "xl dist": (weights * xl_distance).sum(dim=2)}
                totals = sums.setdefault(layer, dict.fromkeys(measures, 0.0))
                for name, value in measures.items():
                    totals[name] += float(value[real].sum())
            tokens += int(real.sum())
    return {layer: {name: value / tokens for name, value in totals.items()}
            for layer, totals in sums.items()}


def main(data_bin, *named_checkpoints):
    print("| checkpoint | layer | near | xl near | dist | xl dist |")
    print("|---|---|---|---|---|---|")
    for named in named_checkpoints:
        name, checkpoint = named.split("=", 1)
        model, task = load_model(os.path.abspath(checkpoint), data_bin)
        _, batches = split_batches(model, task, "valid", 4000)
        for layer, values in attention_span(model, batches).items():
            print(f"| {name} | {layer} | {100 * values['near']:.1f}% | "
                  f"{100 * values['xl near']:.1f}% | {values['dist']:.2f} | "
                  f"{values['xl dist']:.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
