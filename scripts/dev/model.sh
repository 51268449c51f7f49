#!/usr/bin/env bash
# `npm run model`: a real small language model for the judge, locally, in one command —
# SmolLM2-135M-Instruct (Apache-2.0, Q4_1) on llama.cpp's OpenAI-compatible server at
# http://127.0.0.1:${TRAJWATCH_MODEL_PORT:-8080}/v1, under the name
# smollm2-135m-instruct-q4_1 (what examples/judge-local.yaml asks for). Builds the server's
# venv and fetches the model first when they are not there (scripts/setup/llama-server-env.sh:
# compiles llama.cpp, several minutes the first time). Runs in the foreground; Ctrl-C stops it.
#
# A larger model: MODEL=/path/to/model.gguf MODEL_ALIAS=name npm run model (and the same name
# as judge.client.model), or point judge.client at vLLM or Ollama (examples/judge-local.yaml).
set -euo pipefail
cd "$(dirname "$0")/../.."
env_out="$(bash scripts/setup/llama-server-env.sh)"
python="$(sed -n 's/^python=//p' <<<"$env_out")"
smollm2="$(sed -n 's/^smollm2=//p' <<<"$env_out")"
model="${MODEL:-$smollm2}"
alias="${MODEL_ALIAS:-smollm2-135m-instruct-q4_1}"
port="${TRAJWATCH_MODEL_PORT:-8080}"
if [[ -z "$model" || ! -f "$model" ]]; then
  echo "model: no model file (${model:-none}); set MODEL=/path/to/model.gguf, or unset TRAJWATCH_SKIP_SMOLLM2" >&2
  exit 1
fi
echo "model: serving $model as \"$alias\" at http://127.0.0.1:$port/v1 (Ctrl-C stops)" >&2
exec "$python" -m llama_cpp.server --model "$model" --model_alias "$alias" --host 127.0.0.1 --port "$port" \
  --n_ctx "${MODEL_CONTEXT:-8192}" --n_threads "${MODEL_THREADS:-2}"
