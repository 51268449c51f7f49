"""LangGraph (prebuilt ReAct agent, ChatOpenAI) traced by OpenInference's LangChain
instrumentation, exported with the OpenTelemetry SDK's OTLP/HTTP exporter, as the
OpenInference docs show. The conversation is one checkpointer thread: its `thread_id` is the
session, which OpenInference records as `session.id`.
"""

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
LangChainInstrumentor().instrument(tracer_provider=provider)

agent = create_react_agent(
    ChatOpenAI(model=m.MODEL),
    # ToolNode re-raises a tool's exception by default; handle_tool_errors=True, as the
    # LangGraph docs show, returns it to the model as an error ToolMessage instead.
    tools=ToolNode([tool(m.get_weather), tool(m.lookup_order)], handle_tool_errors=True),
    prompt=m.SYSTEM_PROMPT,
    checkpointer=InMemorySaver(),
)
config = {"configurable": {"thread_id": m.SESSION_ID}}
for turn in m.TURNS:
    state = agent.invoke({"messages": [{"role": "user", "content": turn}]}, config)
    m.say(state["messages"][-1].content)
provider.shutdown()
