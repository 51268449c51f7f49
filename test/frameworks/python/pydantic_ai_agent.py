"""Pydantic AI (OpenAIChatModel) with its built-in OpenTelemetry instrumentation
(`Agent.instrument_all()`, no Logfire) on the OpenTelemetry SDK's OTLP/HTTP exporter. Turn 2
continues turn 1's `message_history`; the conversation id is the run's `conversation_id`.
A tool reports a failure to the model by raising `ModelRetry` (any other exception ends the
run), which is what the Pydantic AI docs tell a user to do.
"""

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
Agent.instrument_all()

agent = Agent(
    OpenAIChatModel(m.MODEL, provider=OpenAIProvider(base_url=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY)),
    instructions=m.SYSTEM_PROMPT,
)


@agent.tool_plain
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


@agent.tool_plain
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    try:
        return m.lookup_order(order_id)
    except m.OrderServiceUnavailable as error:
        raise ModelRetry(f"{type(error).__name__}: {error}") from error


history = None
for turn in m.TURNS:
    result = agent.run_sync(turn, message_history=history, conversation_id=m.SESSION_ID)
    history = result.all_messages()
    m.say(result.output)
provider.shutdown()
