"""What training did to Eq. 7's U and V, read from checkpoints: their norms, U's distance from
the identity, how large each term of PE_abs U + PE_XL V is on the sinusoids of positions 0-255 and
the share of saturated tanh units there.

    python docs/results/inxl-at-scale/cpu-512/weights.py CHECKPOINT...

Prints one JSON line a checkpoint, then the same for the two initialisations at the last
checkpoint's width (Xavier drawn with seed 1). Positions are monotone here (pos_XL = pos_abs).
"""
import json
import sys

import torch
from fairseq.modules.sinusoidal_positional_embedding import SinusoidalPositionalEmbedding

POSITIONS = 256


def measures(name, u, v):
    width = u.size(0)
    # the rows fairseq's sinusoid gives positions 0..POSITIONS-1 (its table starts after padding)
    table = SinusoidalPositionalEmbedding.get_embedding(POSITIONS + 2, width, 1)[2:]
    pre = table @ u.T + table @ v.T
    return {
        "checkpoint": name,
        "u_norm": round(float(u.norm()), 3),
        "v_norm": round(float(v.norm()), 3),
        "u_minus_identity": round(float((u - torch.eye(width)).norm()), 3),
        "abs_term": round(float((table @ u.T).norm(dim=1).mean()), 3),
        "xl_term": round(float((table @ v.T).norm(dim=1).mean()), 3),
        "sinusoid": round(float(table.norm(dim=1).mean()), 3),
        "saturated": round(float((pre.abs() > 2).double().mean()), 4),
    }


def main(paths):
    for path in paths:
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        state = checkpoint["model"]
        # --xlpe-uv-lr-scale stores U and V divided by the scale
        scale = getattr(checkpoint["cfg"]["model"], "xlpe_uv_lr_scale", 1.0)
        u = scale * next(w for k, w in state.items() if k.endswith("pe_in.u.weight")).float()
        v = scale * next(w for k, w in state.items() if k.endswith("pe_in.v.weight")).float()
        print(json.dumps(measures(path, u, v)), flush=True)
    width = u.size(0)
    print(json.dumps(measures("identity init", torch.eye(width), torch.zeros(width, width))))
    torch.manual_seed(1)
    u, v = torch.empty(width, width), torch.empty(width, width)
    torch.nn.init.xavier_uniform_(u)
    torch.nn.init.xavier_uniform_(v)
    print(json.dumps(measures("xavier init", u, v)))


if __name__ == "__main__":
    main(sys.argv[1:])
