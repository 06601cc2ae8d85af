"""Small real pydantic-ai agents driven by FunctionModel (no network), for tests that need genuine messages."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def _weather_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    if any(isinstance(part, ToolReturnPart) for part in last.parts):
        result = next(part for part in last.parts if isinstance(part, ToolReturnPart))
        return ModelResponse(parts=[TextPart(f"The weather is {result.content}.")])
    return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Zürich"}, tool_call_id="call-weather-1")])


def weather_agent() -> Agent:
    agent = Agent(FunctionModel(_weather_model), system_prompt="You are a weather assistant.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    return agent


def weather_messages(prompt: str = "What is the weather in Zürich?", **run_kwargs) -> list[ModelMessage]:
    """The full history of one real agent run: system prompt, user prompt, tool call, tool result, answer."""
    return weather_agent().run_sync(prompt, **run_kwargs).all_messages()


def record_with_harness(store, prompts: list[str], *, conversation_id: str, agent_name: str = "weather") -> list[str]:
    """Run the weather agent once per prompt, threading the history, with the harness's StepPersistence on `store`.

    Returns the store's run ids in order (the harness derives them from the agent name and the run).
    """
    import asyncio

    from pydantic_ai_harness.step_persistence import StepPersistence

    agent = weather_agent()
    history: list[ModelMessage] = []
    for prompt in prompts:
        persistence = StepPersistence(store=store, agent_name=agent_name)
        result = agent.run_sync(
            prompt, message_history=history or None, conversation_id=conversation_id, capabilities=[persistence]
        )
        history = result.all_messages()
    runs = asyncio.run(store.list_runs(conversation_id=conversation_id))
    return [run.run_id for run in sorted(runs, key=lambda run: run.started_at)]


def traced_weather_runs(tracer_provider, prompts: list[str], *, conversation_id: str | None, **settings) -> list:
    """Run the weather agent once per prompt, threading the history, with pydantic-ai's own OpenTelemetry
    instrumentation on `tracer_provider` (`settings` go to InstrumentationSettings). Returns the run results."""
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    agent = weather_agent()
    instrumentation = Instrumentation(
        settings=InstrumentationSettings(tracer_provider=tracer_provider, **settings)
    )
    results = []
    history: list[ModelMessage] = []
    for prompt in prompts:
        result = agent.run_sync(
            prompt, message_history=history or None, conversation_id=conversation_id, capabilities=[instrumentation]
        )
        history = result.all_messages()
        results.append(result)
    return results
