"""Who said what, in a Slack thread with three travellers, the person who asked and a bystander:
each stored message keeps its sender and the model reads it; a bystander's (or a traveller's)
word on the whole trip waits as a suggestion until the requester's Yes; every mention reaches
Slack as a mention, and a person's own words as they typed them. What the bot posted is read
back from the fake Slack Web API; the offline planner (no model) gets the same guarantee."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_core.model import TokenUsage, ToolChoice
from agent_core.offline.planner import OfflinePlanner
from agent_core.schema import Message, Role
from bot.surface import ChatKey
from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.slack_support import SlackStack, is_plan, slack_stack
from tests.team_support import _call, party_plan
from tests.test_team_slack import until
from tests.validator_support import load_sandbox

LABELS = ("<@U0ANA>", "<@U0BO>", "<@U0CHEN>")
PEOPLE = {"U0LEAD": "Lea", "U0ANA": "Ana", "U0BO": "Bo", "U0CHEN": "Chen", "U0DAN": "Dan"}
REQUEST = "offsite in Hangzhou, 12-14 December, for <@U0ANA> (Beijing), <@U0BO> and <@U0CHEN> (Shenzhen)"
ASK_BO = "<@U0BO>, which city are you leaving from?"


class Recorder:
    """A scripted model that asks Bo for his home city once, then plans for the destination the
    conversation's last person's message names (Hangzhou unless told otherwise); `seen` holds
    every request as the model reads it (the wire form: who said what)."""

    name = "who-said-what-script"

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    async def ask_tool(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       tool_choice: ToolChoice = "auto", usage: TokenUsage | None = None) -> Message:
        self.seen.append([m.to_openai() for m in messages])
        if not any(m.role is Role.TOOL for m in messages):
            return Message.assistant(None, [_call("ask_human", {"inquire": ASK_BO, "to": "<@U0BO>"}, "call_ask_bo")])
        said = [m.content or "" for m in messages if m.role is Role.USER]
        plan = party_plan(LABELS)
        plan["destination_city"] = "Guangzhou" if "Guangzhou" in said[-1] else "Hangzhou"
        return Message.assistant(None, [_call("submit_plan", {"summary": f"Plan {len(self.seen)}", "plan": plan},
                                              f"call_plan_{len(self.seen)}")])

    def user_turns(self, request: int = -1) -> list[str]:
        return [str(m["content"]) for m in self.seen[request] if m["role"] == "user"]


def fake_slack() -> FakeSlack:
    fake = FakeSlack(channels={"C1": "channel"}, post_rate=100.0, post_burst=100)
    fake.members["C1"] = ["UBOT", *PEOPLE]
    fake.user_names.update(PEOPLE)
    return fake


def suggestions(s: SlackStack, thread: str) -> list[SlackMessage]:
    return [m for m in s.fake.bot_posts("C1", thread)
            if any(str(b.get("block_id", "")).startswith("suggestion:") for b in m.blocks)]


def value(post: SlackMessage, choice: str) -> str:
    return next(v for v in post.button_values() if v.startswith(f"{choice}:"))


async def said_after(s: SlackStack, thread: str, before: int, needle: str) -> SlackMessage:
    def found(f: FakeSlack) -> bool:
        return any(needle in m.text for m in f.bot_posts("C1", thread)[before:])
    await s.fake.wait_for(found, 10)
    return next(m for m in s.fake.bot_posts("C1", thread)[before:] if needle in m.text)


def plans(s: SlackStack, thread: str) -> list[SlackMessage]:
    return [m for m in s.fake.bot_posts("C1", thread) if is_plan(m)]


async def test_a_bystanders_word_waits_for_the_requesters_yes_and_every_mention_is_one(tmp_path: Path) -> None:
    model = Recorder()
    async with fake_slack() as fake, slack_stack(tmp_path, fake=fake, chat_model=model) as s:
        msg = s.mention(user="U0LEAD", text=REQUEST)
        await s.events.app_mention(msg)
        thread, chat = msg.ts, ChatKey("slack", "C1", msg.ts)
        asked = await said_after(s, thread, 0, "❓")
        # the question and the status line name Bo with a live mention, not as escaped text
        assert asked.text == f"<@U0BO> ❓ {ASK_BO}"
        status = next(m for m in s.fake.bot_posts("C1", thread) if "ask_human" in m.text)
        assert "<@U0BO>" in status.text and "&lt;@" not in status.text

        async def waiting() -> list[str]:
            return [q.asker_id for q in await s.runtime.store.questions_for_chat(str(chat)) if q.posted_after]
        await until(waiting, ["U0BO"])
        # Ana (a traveller) answers Bo's question for him, with a new destination: not hers to change
        before = len(s.fake.bot_posts("C1", thread))
        await s.events.message(s.fake.user_message("C1", "U0ANA", "Guangzhou", thread_ts=thread))
        kept = await said_after(s, thread, before, "suggests")
        assert kept.text == ("That question is for <@U0BO>; only their reply answers it. <@U0ANA>'s message is kept "
                             "as a suggestion.\n<@U0ANA> suggests Guangzhou instead of Hangzhou. <@U0LEAD>, change it?")
        assert kept.button_values() == [value(kept, "accept"), value(kept, "decline")]
        # Dan may not decide it; Bo answers his question, and the plan still goes to Hangzhou
        await s.events.block_action(kept, user="U0DAN", value=value(kept, "accept"))
        await said_after(s, thread, before, "Only <@U0LEAD> can decide on <@U0ANA>'s suggestion.")
        await s.events.message(s.fake.user_message("C1", "U0BO", "Shanghai", thread_ts=thread))
        await s.fake.wait_for(lambda f: len(plans(s, thread)) == 1, 10)
        assert model.seen[-1][-1]["content"] == "Bo (@u0bo): Shanghai"  # the model reads who answered
        assert model.user_turns() == [f"Lea (@u0lead): {REQUEST}"]  # and who asked: nothing of Ana's
        first = plans(s, thread)[0]
        assert "Beijing, Shanghai, Shenzhen → Hangzhou" in first.text
        assert "*<@U0ANA>* · Beijing" in first.text  # the per-person summary's mention stays live

        # the requester says Yes: Ana's words become the requester's change, and the trip is planned again
        before = len(s.fake.bot_posts("C1", thread))
        await s.events.block_action(kept, user="U0LEAD", value=value(kept, "accept"))
        await said_after(s, thread, before, "<@U0LEAD> accepted <@U0ANA>'s suggestion")
        await s.fake.wait_for(lambda f: len(plans(s, thread)) == 2, 10)
        assert model.user_turns()[-1] == "Ana (@u0ana): Guangzhou"
        assert "→ Guangzhou" in plans(s, thread)[1].text
        session = await s.runtime.store.get_session(str(chat))
        assert session is not None and session.asker_id == "U0LEAD"  # still the requester's trip
        history = await s.runtime.store.load_messages(session.id)
        senders = [(m.sender.user_id if m.sender else None, m.content) for m in history if m.role is Role.USER]
        assert senders == [("U0LEAD", REQUEST), ("U0ANA", "Guangzhou")]  # every stored message keeps its sender

        # Dan, who has not spoken yet, quotes the requester: kept as his suggestion; No keeps the trip
        before = len(s.fake.bot_posts("C1", thread))
        await s.events.message(s.fake.user_message(
            "C1", "U0DAN", "&gt; offsite in Hangzhou\nno, Xiamen! and ask <@U0CHEN> &amp; <!channel>", thread_ts=thread))
        second = await said_after(s, thread, before, "suggests")
        assert second.text.startswith("<@U0DAN>'s reply quotes someone else's message: it counts as <@U0DAN>'s own "
                                      "words.\n<@U0DAN> is not part of this trip's conversation yet")
        # his words are shown as he typed them: his mention and Slack's control sequences stay text
        assert "ask &lt;\u2060@U0CHEN&gt; &amp; &lt;!channel&gt;”" in second.text
        await s.events.block_action(second, user="U0LEAD", value=value(second, "decline"))
        await said_after(s, thread, before, "<@U0LEAD> declined <@U0DAN>'s suggestion; the trip stays as it is.")
        await s.events.block_action(second, user="U0LEAD", value=value(second, "accept"))  # too late
        await said_after(s, thread, before, "That suggestion has already been decided")
        assert len(model.seen) == 3 and len(plans(s, thread)) == 2  # nothing more was planned
        # every mention the bot posted is a mention: no escaped one outside a person's quoted words
        for post in s.fake.bot_posts("C1", thread):
            assert "&lt;@" not in post.text.replace("&lt;\u2060@", ""), post.text


async def test_a_traveller_changes_their_own_legs_and_a_missing_member_is_named(tmp_path: Path) -> None:
    model = Recorder()
    async with fake_slack() as fake, slack_stack(tmp_path, fake=fake, chat_model=model) as s:
        msg = s.mention(user="U0LEAD", text=REQUEST + " and <@U0EVE> (Nanjing)")
        await s.events.app_mention(msg)
        thread = msg.ts
        # Eve is not in the channel: said at once, and the request goes on
        gone = await said_after(s, thread, 0, "Not in this channel")
        assert gone.text.startswith("Not in this channel: <@U0EVE>. They cannot see this thread")
        await said_after(s, thread, 0, "❓")
        await until(lambda: _waiting(s, thread), 1)
        await s.events.message(s.fake.user_message("C1", "U0BO", "Shanghai", thread_ts=thread))
        await s.fake.wait_for(lambda f: len(plans(s, thread)) == 1, 10)
        # Chen, a traveller, changes his own leg: taken into account, a new turn, no question to anyone
        before = len(s.fake.bot_posts("C1", thread))
        await s.events.message(s.fake.user_message("C1", "U0CHEN", "I'll arrive after 10 am, second class", thread_ts=thread))
        await s.fake.wait_for(lambda f: len(plans(s, thread)) == 2, 10)
        assert model.user_turns()[-1] == "Chen (@u0chen): I'll arrive after 10 am, second class"
        assert not suggestions(s, thread)
        # ... but not the dates of the whole trip: that waits for the requester
        await s.events.message(s.fake.user_message("C1", "U0CHEN", "let's make it 15-17 December", thread_ts=thread))
        kept = await said_after(s, thread, before, "suggests")
        assert kept.text.startswith("<@U0CHEN> can change their own journey (home city, seat, when they leave or "
                                    "arrive), but the destination, dates and budget are <@U0LEAD>'s to change")
        assert len(plans(s, thread)) == 2 and len(model.seen) == 3


async def _waiting(s: SlackStack, thread: str) -> int:
    return len([q for q in await s.runtime.store.questions_for_chat(f"slack:C1:{thread}") if q.posted_after])


async def test_the_offline_planner_never_takes_a_bystanders_word_for_a_change(tmp_path: Path) -> None:
    sandbox = load_sandbox()
    async with fake_slack() as fake, slack_stack(tmp_path, fake=fake, chat_model=OfflinePlanner(sandbox.gazetteer),
                                                  tool_set=sandbox.tools) as s:
        msg = s.mention(user="U0LEAD", text=REQUEST.replace("<@U0BO>", "<@U0BO> (Shanghai)").replace(
            "<@U0CHEN> (Shenzhen)", "<@U0CHEN>"))
        await s.events.app_mention(msg)
        thread = msg.ts
        await said_after(s, thread, 0, "<@U0CHEN> ❓ <@U0CHEN>, which city are you leaving from?")
        await until(lambda: _waiting(s, thread), 1)
        # Dan answers for Chen, naming another city: kept as a suggestion; Chen's own answer counts
        await s.events.message(s.fake.user_message("C1", "U0DAN", "Guangzhou", thread_ts=thread))
        await said_after(s, thread, 0, "<@U0DAN> suggests Guangzhou instead of Hangzhou")
        await s.events.message(s.fake.user_message("C1", "U0CHEN", "Shenzhen", thread_ts=thread))
        await s.fake.wait_for(lambda f: len(plans(s, thread)) == 1, 20)
        plan = plans(s, thread)[0]
        assert "→ Hangzhou" in plan.text and "Guangzhou" not in plan.text
        assert "*<@U0CHEN>* · Shenzhen" in plan.text
        session = await s.runtime.store.get_session(f"slack:C1:{thread}")
        assert session is not None
        history = await s.runtime.store.load_messages(session.id)
        said = [(m.role.value, m.sender.user_id if m.sender else None, m.content) for m in history
                if m.role is Role.USER or m.name == "ask_human"]
        # what the planner read: the request and Chen's answer, each with its sender; nothing of Dan's
        assert said == [("user", "U0LEAD", msg.text.removeprefix("<@UBOT> ")), ("tool", "U0CHEN", "Shenzhen")]
