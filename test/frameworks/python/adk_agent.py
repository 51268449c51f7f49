"""Google ADK (an `LlmAgent` on ADK's LiteLLM wrapper, `LiteLlm(model="openai/…", api_base=…)`)
with ADK's built-in OpenTelemetry tracing on the OpenTelemetry SDK's OTLP/HTTP exporter, as
ADK's observability docs set it up. Both turns run through one `InMemoryRunner` in one ADK
session, created with the scenario's id: ADK puts it on its spans (`gen_ai.conversation.id`).
A tool reports a failure to the model by returning a dict with an `error` member, which ADK's
FunctionTool reads as a failed call (span status ERROR, `error.type`), and which is what a
raised exception would not do (it ends the run).
"""

import asyncio

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


def lookup_order(order_id: str) -> dict:
    """Look up an order by its id."""
    try:
        return {"result": m.lookup_order(order_id)}
    except m.OrderServiceUnavailable as error:
        return {"error": f"{type(error).__name__}: {error}"}


agent = LlmAgent(
    name="assistant",
    model=LiteLlm(model=f"openai/{m.MODEL}", api_base=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY),
    instruction=m.SYSTEM_PROMPT,
    tools=[get_weather, lookup_order],
)


async def main():
    runner = InMemoryRunner(agent=agent, app_name="matrix")
    await runner.session_service.create_session(app_name="matrix", user_id="matrix-user", session_id=m.SESSION_ID)
    for turn in m.TURNS:
        final = ""
        message = types.Content(role="user", parts=[types.Part(text=turn)])
        async for event in runner.run_async(user_id="matrix-user", session_id=m.SESSION_ID, new_message=message):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(p.text or "" for p in event.content.parts)
        m.say(final)
    await runner.close()


asyncio.run(main())
provider.shutdown()
