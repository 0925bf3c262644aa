"""A byte-level BPE tokenizer trained locally on a list of texts, for the tiny CPU models built from a config.

Shared by the imitator's SFT (agents/imitator/sft.py) and the OR-Debug GRPO smoke run (ordebug/grpo.py): both
need a tokenizer without downloading one. transformers/tokenizers are imported on call (the `.[train]` extra).
"""

from __future__ import annotations


def train_bpe(texts: list[str], vocab_size: int, special_tokens: list[str], **fast_kwargs):
    """A `PreTrainedTokenizerFast` (byte-level BPE, every byte in the alphabet) trained on `texts`;
    `fast_kwargs` name its pad/eos/... tokens, which must be among `special_tokens`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, **fast_kwargs)
