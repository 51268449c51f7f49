"""LangGraph (prebuilt ReAct agent, ChatOpenAI) traced by OpenLIT (`openlit.init`), whose
LangChain callback records each tool's arguments as `gen_ai.tool.call.arguments` =
LangChain's `input_str`, which is `str(tool_input)`: a Python repr (`{'city': 'Paris'}`), not
the JSON the GenAI convention specifies. The conversation is one checkpointer thread, whose
`thread_id` OpenLIT records as `gen_ai.conversation.id`.

OpenLIT fetches a model price list from GitHub at start unless given one (no network here):
an empty local list is passed, as its docs allow (`pricing_json`), and metrics are off.
"""

import json
import os
import tempfile

import openlit
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent

import matrix_common as m

pricing = os.path.join(tempfile.mkdtemp(), "pricing.json")
with open(pricing, "w", encoding="utf-8") as f:
    json.dump({"chat": {}, "embeddings": {}, "images": {}, "audio": {}}, f)

openlit.init(
    otlp_endpoint=m.OTLP_ENDPOINT,
    application_name=os.environ.get("OTEL_SERVICE_NAME", "matrix-openlit-langchain"),
    disable_metrics=True,
    pricing_json=pricing,
)

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

# openlit.init installs the global tracer provider; flush it before exiting.
from opentelemetry import trace  # noqa: E402

trace.get_tracer_provider().shutdown()
