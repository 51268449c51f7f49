"""Microsoft AutoGen AgentChat (`AssistantAgent` on `OpenAIChatCompletionClient`) with AutoGen's
built-in OpenTelemetry tracing, set up as AutoGen's "Tracing and Observability" guide shows: an
SDK tracer provider made global with an OTLP exporter (here OTLP/HTTP), AutoGen's own GenAI
spans (`create_agent`, `invoke_agent`, `execute_tool <name>`) through that global provider, and
`opentelemetry-instrumentation-openai` (`OpenAIInstrumentor().instrument()`) for the model calls,
which the guide adds. AutoGen's tool spans carry the tool's name and call id, not its arguments
or result: those are in the llm spans' messages.

Both turns are `agent.run(task=...)` on the same agent, which keeps its model context. AutoGen
has no session or conversation id in its telemetry: as the guide does for a team run, the app
makes the agent and runs both turns inside one span of its own. `max_tool_iterations` lets the agent call tools until
the model answers in text (the default stops after one round); `reflect_on_tool_use` has that
answer come from the model. A tool that raises is reported to the model by AutoGen itself
(`FunctionExecutionResult(is_error=True)`), with the exception recorded on its span.
"""

import asyncio

from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import ModelFamily, ModelInfo
from autogen_ext.models.openai import OpenAIChatCompletionClient
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
OpenAIInstrumentor().instrument()


async def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


async def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return m.lookup_order(order_id)


async def main():
    model_client = OpenAIChatCompletionClient(
        model=m.MODEL,
        base_url=m.OPENAI_BASE_URL,
        api_key=m.OPENAI_API_KEY,
        # An endpoint other than OpenAI's: the client is told what the model can do.
        model_info=ModelInfo(vision=False, function_calling=True, json_output=True, structured_output=True, family=ModelFamily.GPT_4O),
    )
    # As in the guide, the agent is made inside the app's span: its `create_agent` span would
    # otherwise be a trace of its own.
    with trace.get_tracer("weather-assistant").start_as_current_span("conversation"):
        agent = AssistantAgent(
            name="weather_assistant",
            model_client=model_client,
            tools=[get_weather, lookup_order],
            system_message=m.SYSTEM_PROMPT,
            max_tool_iterations=10,
            reflect_on_tool_use=True,
        )
        for task in m.TURNS:
            result = await agent.run(task=task)
            m.say(result.messages[-1].content)
    await model_client.close()


asyncio.run(main())
tracer_provider.shutdown()
