"""LangGraph (prebuilt ReAct agent, ChatOpenAI) traced by OpenLLMetry's LangChain
instrumentation (opentelemetry-instrumentation-langchain, a LangChain callback handler),
exported with the OpenTelemetry SDK's OTLP/HTTP exporter. Its tool spans record the whole
callback envelope as the arguments: `{"input_str": str(args), "tags": ..., "metadata": ...,
"inputs": {...args...}, "kwargs": {"color": ..., "name": ..., "tool_call_id": ...}}`, with
a per-call id inside. The conversation is one checkpointer thread: LangGraph copies its
`thread_id` into the run metadata, which the instrumentation carries as association
properties.
"""

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
LangchainInstrumentor().instrument(tracer_provider=provider)

agent = create_react_agent(
    ChatOpenAI(model=m.MODEL),
    tools=ToolNode([tool(m.get_weather), tool(m.lookup_order)], handle_tool_errors=True),
    prompt=m.SYSTEM_PROMPT,
    checkpointer=InMemorySaver(),
)
config = {"configurable": {"thread_id": m.SESSION_ID}}
for turn in m.TURNS:
    state = agent.invoke({"messages": [{"role": "user", "content": turn}]}, config)
    m.say(state["messages"][-1].content)
provider.shutdown()
