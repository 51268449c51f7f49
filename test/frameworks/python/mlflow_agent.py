"""MLflow tracing (`mlflow-tracing`): the app's own `openai` tool loop with
`mlflow.openai.autolog()` for the model calls and `@mlflow.trace(span_type=SpanType.TOOL)` on
each tool, as MLflow's tracing guide shows. MLflow exports OTLP instead of to a tracking
server when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (read by MLflow itself). Only that one:
the base OTEL_EXPORTER_OTLP_ENDPOINT also turns on MLflow's OTLP span metrics, which in
mlflow-tracing 3.17.2 fail at every span end (a NameError in `_get_experiment_id`, a name only
the full `mlflow` package defines) and so end no span at all. Its spans
carry its own attributes (`mlflow.spanType`, `mlflow.spanInputs`, `mlflow.spanOutputs`, each a
JSON text). The session id is trace metadata (`mlflow.update_current_trace(session_id=…)`),
which MLflow's OTLP export does not write to any span, so the app wraps both turns in one
span of its own (a `conversation` CHAIN), as the openai-v2 row does.
"""

import json
import os

import matrix_common as m

# Before MLflow is imported: it reads the endpoint when it builds its tracer provider.
del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = m.OTLP_ENDPOINT.rstrip("/") + "/v1/traces"

import mlflow  # noqa: E402
from mlflow.entities import SpanType  # noqa: E402
from openai import OpenAI  # noqa: E402

mlflow.openai.autolog()

client = OpenAI()
TOOL_SPECS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
]


@mlflow.trace(name="get_weather", span_type=SpanType.TOOL)
def get_weather(city):
    return m.get_weather(city)


@mlflow.trace(name="lookup_order", span_type=SpanType.TOOL)
def lookup_order(order_id):
    return m.lookup_order(order_id)


TOOLS = {"get_weather": get_weather, "lookup_order": lookup_order}
messages = [{"role": "system", "content": m.SYSTEM_PROMPT}]


@mlflow.trace(name="weather_turn", span_type=SpanType.AGENT)
def turn(text):
    messages.append({"role": "user", "content": text})
    while True:
        reply = client.chat.completions.create(model=m.MODEL, messages=messages, tools=TOOL_SPECS).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content
        for call in reply.tool_calls:
            try:
                content = TOOLS[call.function.name](**json.loads(call.function.arguments))
            except Exception as error:  # the model is told the tool failed, as a tool loop does
                content = f"Error: {type(error).__name__}: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


@mlflow.trace(name="conversation", span_type=SpanType.CHAIN)
def conversation():
    mlflow.update_current_trace(session_id=m.SESSION_ID)
    for text in m.TURNS:
        m.say(turn(text))


conversation()
# MLflow's OTLP processor batches; its tracer provider flushes it at exit (OTel's atexit hook).
