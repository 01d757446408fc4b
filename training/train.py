"""Train an embedded model's LoRA adapter on the built examples (runs on the GPU machine).

    python training/train.py --model DIR/model.gguf --data examples.npz --out OUT

Loads the model's GGUF with transformers (dequantized, trained in bf16), puts LoRA on
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
    "zh_weight": 1.0,
}


# llama.cpp's converter finds the model by the class name in its config, which a GGUF load leaves
# out: by transformers' model type.
ARCHITECTURES = {"gemma3_text": "Gemma3ForCausalLM", "qwen2": "Qwen2ForCausalLM"}

Example = tuple[np.ndarray, int, bool]  # tokens, prompt length, whether the answer is in zh


def examples(data: dict[str, np.ndarray], validation: bool) -> list[Example]:
    if "zh" not in data:
        raise SystemExit(
            "the data set marks no answer's language: rebuild it with training/build.py"
        )
    offsets = np.concatenate([[0], np.cumsum(data["lengths"])])
    return [
        (
            data["tokens"][offsets[i] : offsets[i + 1]],
            int(data["prompt_tokens"][i]),
            bool(data["zh"][i]),
        )
        for i in range(len(data["lengths"]))
        if bool(data["validation"][i]) == validation
    ]


def batches(items: list[Example], budget: int, rng: random.Random | None, zh_weight: float = 1.0):
    """Examples of similar length together, at most `budget` padded tokens a batch, with each
    row's loss weight (`zh_weight` for a zh answer, 1 for an en one)."""
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
        weights = torch.ones(len(group))
        for row, i in enumerate(group):
            tokens, prompt, zh = items[i]
            ids[row, : len(tokens)] = torch.from_numpy(tokens.astype(np.int64))
            labels[row, prompt : len(tokens)] = ids[row, prompt : len(tokens)]
            mask[row, : len(tokens)] = 1
            weights[row] = zh_weight if zh else 1.0
        yield ids, labels, mask, weights


def loss_of(model, ids, labels, mask, weights) -> tuple[torch.Tensor, torch.Tensor]:
    """The cross-entropy of each answer token, and each one's weight (its row's).

    The output matrix is applied to the answer's positions only: the vocabulary is 150-260k wide,
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
    losses = torch.nn.functional.cross_entropy(logits, target[answer], reduction="none")
    return losses, weights.to(device)[:, None].expand_as(target)[answer]


@torch.no_grad()
def validation_losses(model, items: list[Example], budget: int) -> dict[str, float]:
    """The mean loss per answer token (unweighted, whatever --zh-weight), over all answers and
    per language that has any."""
    model.eval()
    losses = {"zh": 0.0, "en": 0.0}
    tokens = {"zh": 0, "en": 0}
    for lang, part in (("zh", [i for i in items if i[2]]), ("en", [i for i in items if not i[2]])):
        for ids, labels, mask, weights in batches(part, budget, None):
            with torch.autocast(next(model.parameters()).device.type, dtype=torch.bfloat16):
                token_losses, _ = loss_of(model, ids, labels, mask, weights)
            losses[lang] += float(token_losses.sum())
            tokens[lang] += token_losses.numel()
    model.train()
    return {
        "validation_loss": sum(losses.values()) / max(sum(tokens.values()), 1),
        **{f"validation_loss_{lang}": losses[lang] / n for lang, n in tokens.items() if n},
    }


def positive(text: str) -> float:
    """An option's value above zero."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above zero")
    return value


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
    parser.add_argument("--learning-rate", type=positive, default=HYPERPARAMETERS["learning_rate"])
    parser.add_argument(
        "--zh-weight",
        type=positive,
        default=HYPERPARAMETERS["zh_weight"],
        help="a zh answer token's weight in a batch's mean loss, an en one's being 1 (1: the same)",
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
        "zh_weight": args.zh_weight,
        "learning_rate": args.learning_rate,
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
        "steps_log": [],  # every step: its answer tokens' mean loss and gradient norm
        "skipped_steps": [],  # steps whose loss or gradient was not finite: not applied
    }
    log["curve"].append({"step": 0, **validation_losses(model, valid, 65536)})
    print(json.dumps(log["curve"][-1]), flush=True)
    step = 0
    model.train()
    for epoch in range(h["epochs"]):
        running, seen = 0.0, 0  # the answer tokens' loss, unweighted (as validation's)
        for ids, labels, mask, weights in batches(
            train, h["tokens_per_batch"], rng, h["zh_weight"]
        ):
            with torch.autocast(device.type, dtype=torch.bfloat16):
                token_losses, token_weights = loss_of(model, ids, labels, mask, weights)
            ((token_losses * token_weights).sum() / token_weights.sum()).backward()
            norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), h["max_grad_norm"]))
            mean = float(token_losses.detach().mean())
            step += 1
            log["steps_log"].append([step, round(mean, 4), round(norm, 4), int(ids.shape[1])])
            # One bad batch (an overflow) must not spoil the adapter: its update is dropped.
            if not (math.isfinite(mean) and math.isfinite(norm)):
                log["skipped_steps"].append(step)
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
                continue
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            running += float(token_losses.detach().sum())
            seen += token_losses.numel()
            if args.max_seconds and time.time() - started > args.max_seconds:
                log["stopped_at_step"] = step
                break
        entry = {
            "step": step,
            # A run stopped by --max-seconds logs its last epoch as a part of one (the cosine
            # schedule then never reached its end).
            "epoch": epoch + 1 if "stopped_at_step" not in log else f"{epoch + 1} (partial)",
            "train_loss": running / max(seen, 1),
            **validation_losses(model, valid, 65536),
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
    base["architectures"] = [ARCHITECTURES.get(base["model_type"], base["model_type"])]
    (args.out / "base").mkdir(exist_ok=True)
    (args.out / "base" / "config.json").write_text(json.dumps(base, indent=1))
    log["seconds"] = round(time.time() - started, 1)
    (args.out / "train-log.json").write_text(json.dumps(log, indent=1))


if __name__ == "__main__":
    main()
