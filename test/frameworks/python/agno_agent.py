"""Agno (an `Agent` on `OpenAIChat`) traced by OpenInference's Agno instrumentation
set up as its quickstart shows: a global `TracerProvider` with a `SimpleSpanProcessor` (one
export request per span, as each ends: children arrive before their run's root span, which
alone carries the session id) on the OpenTelemetry SDK's OTLP/HTTP exporter, then
`AgnoInstrumentor().instrument()`. The conversation is Agno's own
session: both turns pass the same `session_id` to `agent.run`, an `InMemoryDb` keeps the
session so turn 2 sees turn 1 (`add_history_to_context`). OpenInference puts that session id
on the agent's run span.

Agno catches a tool's exception itself (the run goes on, the model gets the error text as the
tool result); the instrumentation marks that tool span ERROR with the exception's message.
"""

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai import OpenAIChat
from openinference.instrumentation.agno import AgnoInstrumentor
from opentelemetry import trace as trace_api
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace_api.set_tracer_provider(provider)
AgnoInstrumentor().instrument()


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return m.lookup_order(order_id)


agent = Agent(
    name="weather-assistant",
    model=OpenAIChat(id=m.MODEL, base_url=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY),
    instructions=m.SYSTEM_PROMPT,
    tools=[get_weather, lookup_order],
    db=InMemoryDb(),
    add_history_to_context=True,
    telemetry=False,
)

for turn in m.TURNS:
    result = agent.run(turn, session_id=m.SESSION_ID)
    m.say(result.content)
provider.shutdown()
