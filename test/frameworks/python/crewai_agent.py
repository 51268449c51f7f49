"""CrewAI (one agent, one task per turn) traced by OpenInference's CrewAI instrumentation
(what CrewAI's observability docs show for Arize Phoenix), exported with the OpenTelemetry
SDK's OTLP/HTTP exporter. CrewAI's own anonymous telemetry is off
(CREWAI_DISABLE_TELEMETRY=true). CrewAI has no conversation id: each turn is a kickoff, both
under OpenInference's `using_session`; turn 2's task gets turn 1's answer as context.
"""

from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool
from openinference.instrumentation import using_session
from openinference.instrumentation.crewai import CrewAIInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
CrewAIInstrumentor().instrument(tracer_provider=provider)


@tool("get_weather")
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return m.get_weather(city)


@tool("lookup_order")
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return m.lookup_order(order_id)


assistant = Agent(
    role="Assistant",
    goal="Answer the user's question with the tools",
    backstory=m.SYSTEM_PROMPT,
    tools=[get_weather, lookup_order],
    llm=LLM(model=f"openai/{m.MODEL}", base_url=m.OPENAI_BASE_URL, api_key=m.OPENAI_API_KEY),
    max_iter=8,
)
answers = []
with using_session(m.SESSION_ID):
    for turn in m.TURNS:
        context = f"\n\nThe conversation so far: {answers}" if answers else ""
        task = Task(description=turn + context, expected_output="A short answer", agent=assistant)
        result = Crew(agents=[assistant], tasks=[task]).kickoff()
        answers.append(str(result))
        m.say(str(result))
provider.shutdown()
