"""What every framework scenario of the matrix shares: the conversation, the two tools, and
where to send things. The harness (test/frameworks/harness.ts) passes it all in environment
variables, so the prompts and tool texts have one source (test/frameworks/stand-in-model.ts).

- OPENAI_BASE_URL / OPENAI_API_KEY: the stand-in model (a stand-in for an LLM endpoint, which
  cannot run here), read by every OpenAI client as usual;
- OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_PROTOCOL / OTEL_SERVICE_NAME: read by the
  OpenTelemetry exporters themselves;
- MATRIX_SESSION_ID, MATRIX_TURN_1, MATRIX_TURN_2, MATRIX_WEATHER_TEXT,
  MATRIX_ORDER_ERROR_TYPE, MATRIX_ORDER_ERROR_MESSAGE: the scenario's own inputs.
"""

import os

SESSION_ID = os.environ["MATRIX_SESSION_ID"]
TURNS = [os.environ["MATRIX_TURN_1"], os.environ["MATRIX_TURN_2"]]
MODEL = "gpt-4o-mini"
OPENAI_BASE_URL = os.environ["OPENAI_BASE_URL"]
OPENAI_API_KEY = os.environ["OPENAI_API_KEY"]
OTLP_ENDPOINT = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
SYSTEM_PROMPT = "You are a helpful assistant. Use the tools to answer."

# A distinct exception type, named the same as in the harness.
OrderServiceUnavailable = type(os.environ["MATRIX_ORDER_ERROR_TYPE"], (Exception,), {})


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return os.environ["MATRIX_WEATHER_TEXT"]


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    raise OrderServiceUnavailable(os.environ["MATRIX_ORDER_ERROR_MESSAGE"])


def say(text):
    print(text, flush=True)
