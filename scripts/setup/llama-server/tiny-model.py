"""Writes a tiny random-weight llama-architecture GGUF model on a vocabulary-only GGUF file.

The vocabularies are the ones llama.cpp ships for its tokenizer tests (vendor/llama.cpp/models/
in the llama-cpp-python sdist). The weights are random (seeded), so the model's answers are
nonsense, which is all the judge client's real-server test needs: a real server that tokenizes,
generates, reports logprobs and usage, and fails the way real servers fail.

    python tiny-model.py VOCAB.gguf OUT.gguf
"""
import sys

import numpy as np
import gguf

N_EMBD, N_HEAD, N_FF, N_LAYER, N_CTX = 64, 4, 128, 2, 4096


def main(vocab_path: str, out_path: str) -> None:
    vocab = gguf.GGUFReader(vocab_path)
    fields = {k: f.contents() for k, f in vocab.fields.items() if k.startswith("tokenizer.")}
    tokens = fields["tokenizer.ggml.tokens"]
    n_vocab = len(tokens)
    w = gguf.GGUFWriter(out_path, "llama")
    w.add_name("trajwatch-tiny-random")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model(fields["tokenizer.ggml.model"])
    if "tokenizer.ggml.pre" in fields:
        w.add_tokenizer_pre(fields["tokenizer.ggml.pre"])
    w.add_token_list(tokens)
    if "tokenizer.ggml.token_type" in fields:
        w.add_token_types(fields["tokenizer.ggml.token_type"])
    if "tokenizer.ggml.merges" in fields:
        w.add_token_merges(fields["tokenizer.ggml.merges"])
    for key, add in (("tokenizer.ggml.bos_token_id", w.add_bos_token_id), ("tokenizer.ggml.eos_token_id", w.add_eos_token_id)):
        if key in fields:
            add(int(fields[key]))
    rng = np.random.default_rng(20)
    rand = lambda *shape: (rng.standard_normal(shape) * 0.02).astype(np.float32)
    w.add_tensor("token_embd.weight", rand(n_vocab, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", rand(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + t + ".weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", rand(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", rand(N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", rand(N_EMBD, N_FF))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
