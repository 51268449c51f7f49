"""OpenLLMetry (traceloop-sdk): `Traceloop.init` with its own OTLP/HTTP exporter pointed at
trajwatch (`api_endpoint`), its anonymous telemetry off (TRACELOOP_TELEMETRY=false), the
OpenAI client instrumented by the SDK, and the app's own tool loop marked with its
decorators (`@workflow` per turn, `@tool` per tool). The session is a Traceloop association
property, as its docs show.
"""

import json

from openai import OpenAI
from opentelemetry import trace
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import tool, workflow

import matrix_common as m

Traceloop.init(app_name="weather-assistant", api_endpoint=m.OTLP_ENDPOINT, disable_batch=True)
Traceloop.set_association_properties({"session_id": m.SESSION_ID})

client = OpenAI()
TOOL_SPECS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
]


@tool(name="get_weather")
def get_weather(city):
    return m.get_weather(city)


@tool(name="lookup_order")
def lookup_order(order_id):
    return m.lookup_order(order_id)


TOOLS = {"get_weather": get_weather, "lookup_order": lookup_order}
messages = [{"role": "system", "content": m.SYSTEM_PROMPT}]


@workflow(name="weather_turn")
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


for text in m.TURNS:
    m.say(turn(text))
# disable_batch=True exports each span as it ends; a flush covers any processor left.
trace.get_tracer_provider().force_flush()
