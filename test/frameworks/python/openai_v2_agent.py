"""The official OpenTelemetry OpenAI instrumentation (`opentelemetry-instrumentation-openai-v2`)
around the `openai` client, in the app's own tool loop, with message content captured as log
events (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) and exported over OTLP/HTTP
(`/v1/traces` and `/v1/logs`), set up as its manual example shows. It instruments model calls
only: tools are the app's own code and make no spans; their calls and results reach the
telemetry only as message-content log records. It has no session id: the app puts both turns
under one `conversation` span of its own, the way a user groups them.
"""

import json

from openai import OpenAI
from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import matrix_common as m

tracer_provider = TracerProvider()
tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(tracer_provider)
logger_provider = LoggerProvider()
logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
_logs.set_logger_provider(logger_provider)
OpenAIInstrumentor().instrument()

client = OpenAI()
TOOL_SPECS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
]
TOOLS = {"get_weather": m.get_weather, "lookup_order": m.lookup_order}
messages = [{"role": "system", "content": m.SYSTEM_PROMPT}]


def turn(text):
    messages.append({"role": "user", "content": text})
    while True:
        reply = client.chat.completions.create(model=m.MODEL, messages=messages, tools=TOOL_SPECS).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content
        for call in reply.tool_calls:
            try:
                content = TOOLS[call.function.name](**json.loads(call.function.arguments))
            except Exception as error:  # the model is told the tool failed, as a tool loop does
                content = f"Error: {type(error).__name__}: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


with trace.get_tracer("weather-assistant").start_as_current_span("conversation"):
    for text in m.TURNS:
        m.say(turn(text))
tracer_provider.shutdown()
logger_provider.shutdown()
