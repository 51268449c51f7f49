"""Langfuse (Python SDK 5, OTel-based): the app's own `openai` tool loop with Langfuse's
OpenAI wrapper (`from langfuse.openai import OpenAI`, a `generation` observation per call),
`@observe(as_type="tool")` on each tool and `@observe(as_type="agent")` per turn, the session
propagated to every span by `propagate_attributes(session_id=…)`, as Langfuse's docs show.
Spans go to trajwatch instead of a Langfuse server through the client's documented
`span_exporter` argument: the OpenTelemetry SDK's OTLP/HTTP exporter, configured by
OTEL_EXPORTER_OTLP_ENDPOINT. The keys are placeholders: nothing is sent to Langfuse.
"""

import json

from langfuse import Langfuse, observe, propagate_attributes
from langfuse.openai import OpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

import matrix_common as m

langfuse = Langfuse(public_key="pk-lf-stand-in", secret_key="sk-lf-stand-in", span_exporter=OTLPSpanExporter())

client = OpenAI()
TOOL_SPECS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
]


@observe(name="get_weather", as_type="tool")
def get_weather(city):
    return m.get_weather(city)


@observe(name="lookup_order", as_type="tool")
def lookup_order(order_id):
    return m.lookup_order(order_id)


TOOLS = {"get_weather": get_weather, "lookup_order": lookup_order}
messages = [{"role": "system", "content": m.SYSTEM_PROMPT}]


@observe(name="weather_turn", as_type="agent")
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


with propagate_attributes(session_id=m.SESSION_ID):
    for text in m.TURNS:
        m.say(turn(text))
langfuse.flush()
