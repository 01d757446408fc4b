"""Train the default model's LoRA adapter on the built examples (runs on the GPU machine).

    python training/train.py --model DIR/model.gguf --data examples.npz --out OUT

Loads the default model's GGUF with transformers (dequantized, trained in bf16), puts LoRA on
the attention and MLP projections (the tied embedding / output matrix stays as it is: the
GGUF converter takes no adapter for it), trains on the answer tokens only, and writes the
adapter, its base config (for llama.cpp's converter) and a log of losses, seeds and
hyperparameters to OUT. Only torch, transformers, peft and gguf are needed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch

HYPERPARAMETERS = {
    "seed": 13,
    "rank": 16,
    "alpha": 32,
    "dropout": 0.05,
    "targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "learning_rate": 3e-4,
    "warmup_steps": 20,
    "epochs": 2,
    "tokens_per_batch": 16384,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
}


def examples(data: dict[str, np.ndarray], validation: bool) -> list[tuple[np.ndarray, int]]:
    offsets = np.concatenate([[0], np.cumsum(data["lengths"])])
    return [
        (data["tokens"][offsets[i] : offsets[i + 1]], int(data["prompt_tokens"][i]))
        for i in range(len(data["lengths"]))
        if bool(data["validation"][i]) == validation
    ]


def batches(items: list[tuple[np.ndarray, int]], budget: int, rng: random.Random | None):
    """Examples of similar length together, at most `budget` padded tokens a batch."""
    order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
    groups, group, longest = [], [], 0
    for index in order:
        length = len(items[index][0])
        if group and max(longest, length) * (len(group) + 1) > budget:
            groups.append(group)
            group, longest = [], 0
        group.append(index)
        longest = max(longest, length)
    if group:
        groups.append(group)
    if rng is not None:
        rng.shuffle(groups)
    for group in groups:
        width = max(len(items[i][0]) for i in group)
        ids = torch.zeros((len(group), width), dtype=torch.long)
        labels = torch.full((len(group), width), -100, dtype=torch.long)
        mask = torch.zeros((len(group), width), dtype=torch.long)
        for row, i in enumerate(group):
            tokens, prompt = items[i]
            ids[row, : len(tokens)] = torch.from_numpy(tokens.astype(np.int64))
            labels[row, prompt : len(tokens)] = ids[row, prompt : len(tokens)]
            mask[row, : len(tokens)] = 1
        yield ids, labels, mask


def loss_of(model, ids, labels, mask) -> tuple[torch.Tensor, int]:
    """Summed cross-entropy over the answer tokens, and their count.

    The output matrix is applied to the answer's positions only: the vocabulary is 262k wide,
    and logits for every prompt position would take most of the step's time and memory.
    """
    device = next(model.parameters()).device
    ids, labels, mask = ids.to(device), labels.to(device), mask.to(device)
    causal = model.get_base_model()
    hidden = causal.model(input_ids=ids, attention_mask=mask, use_cache=False)
    hidden = hidden.last_hidden_state[:, :-1]
    target = labels[:, 1:]
    answer = target != -100
    logits = causal.lm_head(hidden[answer]).float()
    cap = getattr(causal.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    loss = torch.nn.functional.cross_entropy(logits, target[answer], reduction="sum")
    return loss, int(answer.sum())


@torch.no_grad()
def validation_loss(model, items, budget: int) -> float:
    model.eval()
    total, count = 0.0, 0
    for ids, labels, mask in batches(items, budget, None):
        with torch.autocast(next(model.parameters()).device.type, dtype=torch.bfloat16):
            loss, n = loss_of(model, ids, labels, mask)
        total, count = total + float(loss), count + n
    model.train()
    return total / max(count, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of the script")
    parser.add_argument("--limit", type=int, default=0, help="use the first N examples only")
    parser.add_argument("--epochs", type=int, default=HYPERPARAMETERS["epochs"])
    parser.add_argument(
        "--rank", type=int, default=HYPERPARAMETERS["rank"], help="LoRA rank (alpha: twice it)"
    )
    parser.add_argument(
        "--tokens-per-batch",
        type=int,
        default=HYPERPARAMETERS["tokens_per_batch"],
        help="padded tokens per batch (more: fewer, faster steps)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=0,
        help="stop after this long and keep what is trained (a device call has a time limit)",
    )
    args = parser.parse_args()
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    h = {
        **HYPERPARAMETERS,
        "epochs": args.epochs,
        "rank": args.rank,
        "alpha": 2 * args.rank,
        "tokens_per_batch": args.tokens_per_batch,
    }
    device = torch.device(args.device)
    random.seed(h["seed"])
    np.random.seed(h["seed"])
    torch.manual_seed(h["seed"])
    data = dict(np.load(args.data))
    train, valid = examples(data, False), examples(data, True)
    if args.limit:
        train, valid = train[: args.limit], valid[: max(1, args.limit // 4)]
    started = time.time()
    model = AutoModelForCausalLM.from_pretrained(
        str(args.model.parent), gguf_file=args.model.name, dtype=torch.bfloat16
    ).to(device)
    base_config = model.config
    config = LoraConfig(
        r=h["rank"],
        lora_alpha=h["alpha"],
        lora_dropout=h["dropout"],
        target_modules=h["targets"],
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, config)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=h["learning_rate"],
        weight_decay=h["weight_decay"],
    )
    rng = random.Random(h["seed"])
    steps_per_epoch = sum(1 for _ in batches(train, h["tokens_per_batch"], None))
    total_steps = steps_per_epoch * h["epochs"]

    def schedule(step: int) -> float:
        if step < h["warmup_steps"]:
            return (step + 1) / h["warmup_steps"]
        progress = (step - h["warmup_steps"]) / max(1, total_steps - h["warmup_steps"])
        return 0.5 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    log = {
        "hyperparameters": h,
        "data_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "train_examples": len(train),
        "validation_examples": len(valid),
        "trainable_parameters": trainable,
        "steps": total_steps,
        "curve": [],
    }
    log["curve"].append({"step": 0, "validation_loss": validation_loss(model, valid, 65536)})
    print(json.dumps(log["curve"][-1]), flush=True)
    step = 0
    model.train()
    for epoch in range(h["epochs"]):
        running, seen = 0.0, 0
        for ids, labels, mask in batches(train, h["tokens_per_batch"], rng):
            with torch.autocast(device.type, dtype=torch.bfloat16):
                loss, n = loss_of(model, ids, labels, mask)
            (loss / max(n, 1)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), h["max_grad_norm"])
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            running, seen, step = running + float(loss.detach()), seen + n, step + 1
            if args.max_seconds and time.time() - started > args.max_seconds:
                log["stopped_at_step"] = step
                break
        entry = {
            "step": step,
            # A run stopped by --max-seconds logs its last epoch as a part of one (the cosine
            # schedule then never reached its end).
            "epoch": epoch + 1 if "stopped_at_step" not in log else f"{epoch + 1} (partial)",
            "train_loss": running / max(seen, 1),
            "validation_loss": validation_loss(model, valid, 65536),
            "seconds": round(time.time() - started, 1),
        }
        log["curve"].append(entry)
        print(json.dumps(entry), flush=True)
        if "stopped_at_step" in log:
            break
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out / "adapter")
    # llama.cpp's converter reads the base model's config: the architecture named, no
    # quantization section (the GGUF loader records one).
    base = base_config.to_dict()
    base.pop("quantization_config", None)
    base["architectures"] = ["Gemma3ForCausalLM"]
    (args.out / "base").mkdir(exist_ok=True)
    (args.out / "base" / "config.json").write_text(json.dumps(base, indent=1))
    log["seconds"] = round(time.time() - started, 1)
    (args.out / "train-log.json").write_text(json.dumps(log, indent=1))


if __name__ == "__main__":
    main()
