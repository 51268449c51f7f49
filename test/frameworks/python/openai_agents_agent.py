"""OpenAI Agents SDK traced by OpenInference's OpenAI Agents instrumentation, exported with
the OpenTelemetry SDK's OTLP/HTTP exporter. The model is the SDK's default (Responses API)
on an AsyncOpenAI client pointed at the stand-in. Memory across turns is an SDK `SQLiteSession`;
the telemetry session is OpenInference's `using_session` (no span carries a session
otherwise). OpenInference replaces the SDK's own trace exporter (exclusive processor).
"""

import asyncio

from agents import Agent, Runner, SQLiteSession, function_tool, set_default_openai_client
from openai import AsyncOpenAI
from openinference.instrumentation import using_session
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
set_default_openai_client(AsyncOpenAI(base_url=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY))


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


@function_tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return m.lookup_order(order_id)


async def main():
    agent = Agent(name="weather-assistant", instructions=m.SYSTEM_PROMPT, model=m.MODEL, tools=[get_weather, lookup_order])
    session = SQLiteSession(m.SESSION_ID)
    with using_session(m.SESSION_ID):
        for turn in m.TURNS:
            result = await Runner.run(agent, turn, session=session)
            m.say(result.final_output)


asyncio.run(main())
provider.shutdown()
