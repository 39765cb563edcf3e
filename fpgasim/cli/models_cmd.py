"""`fpgasim models`: the shipped target models, or one model file (YAML or a Hugging Face
config.json) as fpgasim reads it."""

from __future__ import annotations

import typer

from fpgasim.cli.common import console, csv_text, dumps_json, rich_table
from fpgasim.cli.options import OutputFormat, format_option, json_option, resolve_format
from fpgasim.config import available, load_model
from fpgasim.config.loader import hf_models, resolve
from fpgasim.config.loader import source_shown as shown
from fpgasim.config.schema import TargetModel
from fpgasim.simulate import target_active_weight_count, target_weight_count


def source_shown(name: str) -> str:
    """The shipped file a model name reads, relative to the data folder."""
    return shown(str(resolve("model", name)))


def model_row(m: TargetModel) -> dict:
    """One model's architecture facts: shape, attention grouping, window, parameters."""
    return {
        "model": m.id,
        "layers": m.layers,
        "hidden": m.hidden,
        "intermediate": m.intermediate,
        "heads": m.heads,
        "kv_heads": m.kv_heads,
        "gqa_group": m.group,
        "vocab": m.vocab,
        "window_tokens": m.window_tokens,
        "params_b": round(target_weight_count(m) / 1e9, 3),
        "active_params_b": round(target_active_weight_count(m) / 1e9, 3),
        "experts": m.moe.experts if m.moe else None,
        "experts_per_token": m.moe.experts_per_token if m.moe else None,
        "params_b_published": m.params_b,
        "qkv_bias": m.attention_bias,
        "tied_embeddings": m.tied_embeddings,
    }


def models(
    file: str | None = typer.Argument(
        None, help="Show one model instead: a shipped name, a YAML path, or a Hugging Face "
        "config.json (Llama, Mistral, Qwen2, Mixtral, Qwen2-MoE, Qwen3-MoE or OLMoE)."
    ),
    chosen: OutputFormat = format_option(OutputFormat.table, "Output: table, json or csv."),
    as_json: bool = json_option(),
) -> None:
    """List the shipped target models (workloads/models), or read one model file.

    The list holds the YAML models and the Hugging Face configs shipped in
    workloads/models/hf, each usable as --model by the name listed.

    params_b is counted from the architecture (embeddings, every projection, norms, the LM
    head unless tied, Qwen2's q/k/v biases) and shown beside the published count;
    active_params_b is what one token uses (a mixture of experts: k of its E experts per
    layer; a dense model: all). A Hugging
    Face config.json is read by its documented keys (docs/models.md, "From a Hugging Face
    config"); give the same path as --model to any command.
    """
    fmt = resolve_format(chosen, as_json)
    if file is not None:
        m = load_model(file)
        row = {**model_row(m), "source": m.source, "hf_name": m.hf_name}
        if fmt is OutputFormat.json:
            print(dumps_json(row))
            return
        if fmt is OutputFormat.csv:
            print(csv_text([row]), end="")
            return
        console.print(rich_table([{"field": k, "value": v} for k, v in row.items()],
                                 title=f"model {m.id}"))
        return
    rows = [{**model_row(load_model(name)), "file": source_shown(name)}
            for name in [*available("model"), *hf_models()]]
    if fmt is OutputFormat.json:
        print(dumps_json(rows))
        return
    if fmt is OutputFormat.csv:
        print(csv_text(rows), end="")
        return
    console.print(rich_table(rows, title="target models: --model takes each name listed (any "
                                         "other Hugging Face config.json by path)"))
