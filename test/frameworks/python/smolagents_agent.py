"""smolagents (ToolCallingAgent, OpenAIModel) traced by OpenInference's smolagents
instrumentation, exported with the OpenTelemetry SDK's OTLP/HTTP exporter. Turn 2 continues
turn 1's memory (`reset=False`); the session is set with OpenInference's `using_session`
(smolagents has no session id of its own).
"""

from openinference.instrumentation import using_session
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from smolagents import OpenAIModel, ToolCallingAgent, tool

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
SmolagentsInstrumentor().instrument(tracer_provider=provider)


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: The city's name.
    """
    return m.get_weather(city)


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id.

    Args:
        order_id: The order's id.
    """
    return m.lookup_order(order_id)


agent = ToolCallingAgent(
    tools=[get_weather, lookup_order],
    model=OpenAIModel(model_id=m.MODEL, api_base=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY),
    max_steps=8,
)
with using_session(m.SESSION_ID):
    for i, turn in enumerate(m.TURNS):
        m.say(str(agent.run(turn, reset=(i == 0))))
provider.shutdown()
