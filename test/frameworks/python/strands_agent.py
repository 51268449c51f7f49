"""Strands Agents (OpenAI model provider) with its own OpenTelemetry support, as its docs
show: `StrandsTelemetry().setup_otlp_exporter()` (OTLP/HTTP, configured by the standard
OTEL_EXPORTER_OTLP_* variables) and `trace_attributes={"session.id": ...}` on the agent.
One Agent object keeps the conversation across both turns. The matrix runs it twice: with
default settings, and with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.
"""

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry

import matrix_common as m

telemetry = StrandsTelemetry()
telemetry.setup_otlp_exporter()

get_weather = tool(m.get_weather)
lookup_order = tool(m.lookup_order)

agent = Agent(
    model=OpenAIModel(client_args={"base_url": m.OPENAI_BASE_URL, "api_key": m.OPENAI_API_KEY}, model_id=m.MODEL),
    tools=[get_weather, lookup_order],
    system_prompt=m.SYSTEM_PROMPT,
    trace_attributes={"session.id": m.SESSION_ID},
    callback_handler=None,
)
for turn in m.TURNS:
    m.say(str(agent(turn)).strip())
telemetry.tracer_provider.shutdown()
