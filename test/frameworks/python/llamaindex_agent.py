"""LlamaIndex (workflow FunctionAgent, llama-index-llms-openai) traced by OpenInference's
LlamaIndex instrumentation, exported with the OpenTelemetry SDK's OTLP/HTTP exporter. One
workflow Context carries the conversation across both turns; the session is set with
OpenInference's `using_session`, as its docs show (LlamaIndex has no session id of its own).
"""

import asyncio

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI
from openinference.instrumentation import using_session
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
LlamaIndexInstrumentor().instrument(tracer_provider=provider)


async def main():
    agent = FunctionAgent(
        tools=[m.get_weather, m.lookup_order],
        llm=OpenAI(model=m.MODEL, api_base=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY),
        system_prompt=m.SYSTEM_PROMPT,
    )
    ctx = Context(agent)
    with using_session(m.SESSION_ID):
        for turn in m.TURNS:
            m.say(str(await agent.run(turn, ctx=ctx)))


asyncio.run(main())
provider.shutdown()
