"""The LoRA-fine-tuned Human Imitator on vLLM under Ray Serve LLM (GPU only).

`ray.serve.llm` needs vLLM, which ships CUDA builds only, so everything here is imported lazily: on a CPU
machine `askopt serve imitator --engine vllm` fails with one clear line instead of an import error at start-up.
Install with `pip install -e '.[gpu]'` (ray[llm]==2.60.0 pins vllm and torch 2.13).

LoRA adapters are multiplexed: put each adapter in a folder under `lora_dir`; clients ask for
`<model_id>:<adapter folder>` as the model name (e.g. "askopt-imitator:manager-v1").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class VLLMImitatorConfig:
    base_model: str  # local path (or hub id on a machine allowed to download) of the base model
    lora_dir: str | None = None  # folder holding LoRA adapter folders
    model_id: str = "askopt-imitator"
    max_model_len: int = 4096
    accelerator_type: str | None = None  # e.g. "H100"; None lets Ray place it on any GPU
    min_replicas: int = 1
    max_replicas: int = 1
    max_adapters_per_replica: int = 4

    def llm_config_dict(self) -> dict:
        """The LLMConfig as plain data: the same dict goes into a `serve run` YAML (serving/imitator_vllm.yaml)."""
        cfg: dict = {
            "model_loading_config": {"model_id": self.model_id, "model_source": self.base_model},
            "engine_kwargs": {"max_model_len": self.max_model_len},
            "deployment_config": {
                "autoscaling_config": {"min_replicas": self.min_replicas, "max_replicas": self.max_replicas}
            },
        }
        if self.accelerator_type:
            cfg["accelerator_type"] = self.accelerator_type
        if self.lora_dir:
            cfg["lora_config"] = {
                "dynamic_lora_loading_path": self.lora_dir,
                "max_num_adapters_per_replica": self.max_adapters_per_replica,
            }
            cfg["engine_kwargs"]["enable_lora"] = True
        return cfg


def build_vllm_app(config: VLLMImitatorConfig):
    try:
        from ray.serve.llm import LLMConfig, LLMServingArgs, build_openai_app
    except ImportError as exc:  # vLLM missing: CPU machine
        raise RuntimeError(
            "engine vllm: ray.serve.llm / vLLM is not installed (GPU only); install '.[gpu]' on a GPU machine "
            f"or use --engine cpu ({exc.__class__.__name__})"
        ) from None
    llm_config = LLMConfig(**config.llm_config_dict())
    return build_openai_app(LLMServingArgs(llm_configs=[llm_config]))
