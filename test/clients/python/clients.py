"""Real Python clients against a live portcullis gateway (started by test/clients/python.test.ts).

Usage: clients.py <openai|agents|litellm|pydantic-ai|mcp>; the gateway's base URL and a token come from the environment
(PORTCULLIS_BASE_URL, PORTCULLIS_TOKEN). Each client makes a plain call, a streamed call, a tool-call round
trip (the client runs the tool and sends the result back) and meets an error, and the script prints one JSON
object saying what each exercise observed; the mocha test asserts on it. Exceptions are reported by class,
module and status, never swallowed.
"""
import asyncio
import json
import os
import sys
import uuid

BASE_URL = os.environ["PORTCULLIS_BASE_URL"]
TOKEN = os.environ["PORTCULLIS_TOKEN"]
MODEL = "shared-general-a"
BAD_TOKEN = "pc_not_a_token"
TOOLS = [{
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}]


def prompt(what):
    # A fresh prompt per call, so no two calls share a job.
    return f"{what} {uuid.uuid4()}"


def describe(err):
    return {"class": type(err).__name__, "module": type(err).__module__, "status": getattr(err, "status_code", None)}


def run_openai():
    import openai

    client = openai.OpenAI(api_key=TOKEN, base_url=BASE_URL, max_retries=0)
    out = {}
    res = client.chat.completions.create(model=MODEL, max_tokens=2048, messages=[{"role": "user", "content": prompt("hello")}])
    out["plain"] = res.choices[0].message.content
    text, usage = "", None
    for chunk in client.chat.completions.create(model=MODEL, max_tokens=2048, stream=True, stream_options={"include_usage": True},
                                                messages=[{"role": "user", "content": prompt("stream")}]):
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.usage:
            usage = chunk.usage.total_tokens
    out["stream"] = {"text": text, "usage": usage}
    messages = [{"role": "user", "content": prompt("weather?")}]
    first = client.chat.completions.create(model=MODEL, max_tokens=2048, tools=TOOLS, messages=messages)
    call = first.choices[0].message.tool_calls[0]
    city = json.loads(call.function.arguments)["city"]
    messages.append(first.choices[0].message)  # as OpenAI's function-calling guide does
    messages.append({"role": "tool", "tool_call_id": call.id, "content": f"sunny in {city}"})
    second = client.chat.completions.create(model=MODEL, max_tokens=2048, tools=TOOLS, messages=messages)
    out["tools"] = second.choices[0].message.content
    try:
        openai.OpenAI(api_key=BAD_TOKEN, base_url=BASE_URL, max_retries=0).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}])
        out["error"] = None
    except openai.APIStatusError as err:
        out["error"] = {**describe(err), "code": err.code, "typed": isinstance(err, openai.AuthenticationError)}
    return out


def run_agents():
    import openai
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # traces would be uploaded to OpenAI; the gateway is the only network here

    @function_tool
    def weather(city: str) -> str:
        """Weather in a city."""
        return f"sunny in {city}"

    def agent(token, tools=()):
        client = openai.AsyncOpenAI(api_key=token, base_url=BASE_URL, max_retries=0)
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        return Agent(name="reviewer", instructions="Be brief.", model=model, tools=list(tools),
                     model_settings=ModelSettings(max_tokens=2048))

    async def main():
        out = {}
        out["plain"] = (await Runner.run(agent(TOKEN), prompt("hello"))).final_output
        streamed = Runner.run_streamed(agent(TOKEN), prompt("stream"))
        async for _ in streamed.stream_events():
            pass
        out["stream"] = {"text": streamed.final_output, "usage": None}
        out["tools"] = (await Runner.run(agent(TOKEN, [weather]), prompt("weather?"))).final_output
        try:
            await Runner.run(agent(BAD_TOKEN), "x")
            out["error"] = None
        except openai.APIStatusError as err:
            out["error"] = {**describe(err), "code": err.code, "typed": isinstance(err, openai.AuthenticationError)}
        return out

    return asyncio.run(main())


def run_litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price list at import
    import litellm

    litellm.telemetry = False
    kw = {"model": f"openai/{MODEL}", "api_base": BASE_URL, "api_key": TOKEN, "max_tokens": 2048, "num_retries": 0}
    out = {}
    res = litellm.completion(messages=[{"role": "user", "content": prompt("hello")}], **kw)
    out["plain"] = res.choices[0].message.content
    text, usage = "", None
    for chunk in litellm.completion(messages=[{"role": "user", "content": prompt("stream")}], stream=True,
                                    stream_options={"include_usage": True}, **kw):
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if getattr(chunk, "usage", None):
            usage = chunk.usage.total_tokens
    out["stream"] = {"text": text, "usage": usage}
    messages = [{"role": "user", "content": prompt("weather?")}]
    first = litellm.completion(messages=messages, tools=TOOLS, **kw)
    call = first.choices[0].message.tool_calls[0]
    city = json.loads(call.function.arguments)["city"]
    # The idiom of LiteLLM's function-calling docs: the response's Message object itself, which carries
    # provider_specific_fields and function_call: null (the gateway drops them).
    messages.append(first.choices[0].message)
    messages.append({"role": "tool", "tool_call_id": call.id, "content": f"sunny in {city}"})
    second = litellm.completion(messages=messages, tools=TOOLS, **kw)
    out["tools"] = second.choices[0].message.content
    try:
        litellm.completion(messages=[{"role": "user", "content": "x"}], **{**kw, "api_key": BAD_TOKEN})
        out["error"] = None
    except litellm.exceptions.AuthenticationError as err:
        out["error"] = {**describe(err), "code": None, "typed": True}
    except Exception as err:  # reported, so the test names the class that came instead
        out["error"] = {**describe(err), "code": None, "typed": False}
    return out


def run_pydantic_ai():
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    # Its streamed requests ask for include_usage and add usage up across chunks, so a second non-null
    # usage in a stream would count every token twice.
    client = AsyncOpenAI(api_key=TOKEN, base_url=BASE_URL, max_retries=0)
    agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)),
                  model_settings={"max_tokens": 2048})

    def counts(u):
        return {"prompt": u.input_tokens, "completion": u.output_tokens, "total": u.total_tokens}

    async def main():
        out = {}
        res = await agent.run(prompt("hello"))
        out["plain"] = {"text": res.output, "usage": counts(res.usage)}
        async with agent.run_stream(prompt("stream")) as streamed:
            text = "".join([part async for part in streamed.stream_text(delta=True)])
            out["stream"] = {"text": text, "usage": counts(streamed.usage)}
        return out

    return asyncio.run(main())


def run_mcp():
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    # The MCP Python SDK against the site host's /mcp, in its default mode ("auto": probe server/discover at
    # the newest revision, fall back to initialize). Every HTTP exchange is recorded (JSON-RPC method, the
    # revision header sent, the status), so the test sees how the negotiation went, not only that it ended.
    exchanges = []

    async def on_response(response):
        sent = json.loads(response.request.content or b"null")
        methods = [m.get("method") for m in sent] if isinstance(sent, list) else [sent.get("method") if sent else None]
        exchanges.append({"methods": methods, "version": response.request.headers.get("mcp-protocol-version"),
                          "status": response.status_code})

    async def main():
        http = httpx2.AsyncClient(event_hooks={"response": [on_response]})
        async with http, Client(streamable_http_client(os.environ["PORTCULLIS_MCP_URL"], http_client=http)) as client:
            tools = await client.list_tools()
            models = await client.call_tool("svc_models", {})
            return {"protocolVersion": client.protocol_version,
                    "tools": [t.name for t in tools.tools], "modelsStatus": models.structured_content["status"],
                    "exchanges": exchanges}

    return asyncio.run(main())


if __name__ == "__main__":
    which = sys.argv[1]
    result = {"openai": run_openai, "agents": run_agents, "litellm": run_litellm, "pydantic-ai": run_pydantic_ai, "mcp": run_mcp}[which]()
    print(json.dumps(result))
