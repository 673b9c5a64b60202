"""Blocks of several images or clips (the seed's ``images`` / ``audio`` lists) through every converter.

Provider formats hold one image a block: each image goes out as its own
provider block, in order, the grouping is reported as lost, and reading back
gives one block per image. The seed-2 form keeps the grouping in its
``metadata.agentmsg`` stash and round-trips the block exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from samples import WAV, png_bytes

import agentmsg as am
from agentmsg.providers._common import ConversionError, ConversionReport
from agentmsg.providers.adaline import from_adaline, to_adaline
from agentmsg.providers.anthropic import from_anthropic, to_anthropic
from agentmsg.providers.gemini import from_gemini, to_gemini
from agentmsg.providers.langchain import from_langchain, to_langchain
from agentmsg.providers.openai_chat import from_openai_chat, to_openai_chat
from agentmsg.providers.openai_responses import from_openai_responses, to_openai_responses

RED, BLUE = png_bytes(color="red"), png_bytes(color="blue")
URL = "https://example.test/cat.png"


def images_message() -> am.UserMessage:
    block = am.ImageContent(images=[RED, URL, BLUE], detail="high")
    return am.UserMessage([am.TextContent("Compare these."), block, am.TextContent("Which is red?")], id="u1")


def image_parts(payload: Any) -> list[Any]:
    """Every image-looking part of a payload, in document order (each format names them its own way)."""
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            kind = value.get("type")
            if kind in {"image_url", "input_image", "image"} or "inlineData" in value or "fileData" in value:
                found.append(value)
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif hasattr(value, "content"):  # a LangChain message object
            walk(value.content)

    walk(payload)
    return found


Converter = tuple[str, Callable[..., Any], Callable[[Any], list[am.AgentMessage]]]
CONVERTERS: list[Converter] = [
    ("openai_chat", to_openai_chat, from_openai_chat),
    ("openai_responses", to_openai_responses, from_openai_responses),
    ("anthropic", to_anthropic, from_anthropic),
    ("gemini", to_gemini, from_gemini),
    ("langchain", to_langchain, from_langchain),
]


@pytest.mark.parametrize(("name", "to_x", "from_x"), CONVERTERS, ids=[c[0] for c in CONVERTERS])
def test_each_image_goes_out_as_its_own_block_in_order(name: str, to_x: Any, from_x: Any) -> None:
    message = images_message()
    report = ConversionReport()
    payload = to_x([message], report=report)
    assert len(image_parts(payload)) == 3, payload
    grouping = [loss for loss in report.losses if "grouping" in loss.what]
    assert [(loss.path, loss.what) for loss in grouping] == [
        ("[0].contents[1]", "the grouping of 3 images in one block")
    ]
    assert "read back as 3 blocks" in grouping[0].reason
    (back,) = from_x(payload)
    assert isinstance(back, am.UserMessage)
    kinds = [type(block).__name__ for block in back.contents]
    assert kinds == ["TextContent", "ImageContent", "ImageContent", "ImageContent", "TextContent"]
    # The images come back in order, as the block's own pieces (one image each, the block's detail).
    pieces = images_message().contents[1].split()  # type: ignore[union-attr]
    got = back.contents[1:4]
    assert [block.data or block.url for block in got] == [p.data or p.url for p in pieces]  # type: ignore[union-attr]
    assert all(block.count == 1 for block in got)  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "to_x", "from_x"), CONVERTERS, ids=[c[0] for c in CONVERTERS])
def test_strict_refuses_to_lose_the_grouping(name: str, to_x: Any, from_x: Any) -> None:
    with pytest.raises(ConversionError, match="grouping of 3 images"):
        to_x([images_message()], strict=True)
    # Split first, and nothing is lost: the same images, one block each.
    split = am.UserMessage([piece for block in images_message().contents for piece in _split(block)], id="u1")
    report = ConversionReport()
    to_x([split], report=report)
    assert not [loss for loss in report.losses if "grouping" in loss.what]


def _split(block: am.Content) -> list[am.Content]:
    return list(block.split()) if isinstance(block, (am.ImageContent, am.AudioContent)) else [block]


def test_later_items_report_losses_under_their_own_path() -> None:
    # A file id has no place in Chat Completions' image_url: the loss names the item, not just the block.
    block = am.ImageContent(images=[RED, am.ImageContent.from_file_id("file-9")])
    report = ConversionReport()
    to_openai_chat([am.UserMessage([block])], report=report)
    assert ("[0].contents[0].images[1]", "image by file id") in [(loss.path, loss.what) for loss in report.losses]


def test_tool_result_images_are_split_too() -> None:
    result = am.ToolResultContent("call_1", [am.TextContent("two shots"), am.ImageContent(images=[RED, BLUE])])
    report = ConversionReport()
    payload = to_anthropic([am.UserMessage([result])], report=report)
    (tool_result,) = payload["messages"][0]["content"]
    assert [part["type"] for part in tool_result["content"]] == ["text", "image", "image"]
    assert [loss.path for loss in report.losses if "grouping" in loss.what] == ["[0].contents[0].content[1]"]


def test_audio_clips_go_out_one_by_one() -> None:
    block = am.AudioContent(audio=[WAV, WAV])
    report = ConversionReport()
    messages = to_openai_chat([am.UserMessage([block])], report=report)
    assert [part["type"] for part in messages[0]["content"]] == ["input_audio", "input_audio"]
    assert [loss.what for loss in report.losses] == ["the grouping of 2 clips in one block"]


# -- seed-2 (Adaline): the grouping survives in the stash -------------------------------------


def test_adaline_round_trips_a_block_of_several_images_exactly() -> None:
    message = am.UserMessage([am.TextContent("look"), am.ImageContent(images=[RED, URL, BLUE], detail="low")])
    payload = to_adaline([message])
    items = payload[0]["content"]
    assert [item["modality"] for item in items] == ["text", "image", "image", "image"]
    same = [item.get("metadata", {}).get("agentmsg", {}).get("sameBlock") for item in items[1:]]
    assert same == [None, True, True]
    assert from_adaline(payload) == [message]


def test_adaline_without_metadata_gives_one_block_per_image() -> None:
    message = am.UserMessage([am.ImageContent(images=[RED, URL])])
    report = ConversionReport()
    (back,) = from_adaline(to_adaline([message], include_metadata=False, report=report))
    assert [block.count for block in back.contents] == [1, 1]  # type: ignore[union-attr]
    assert "sameBlock" in report.losses[1].what  # the grouping is reported lost


def test_adaline_ignores_a_same_block_flag_that_contradicts_the_payload() -> None:
    image = {"modality": "image", "detail": "auto", "value": {"type": "url", "url": URL}}
    flagged = {**image, "metadata": {"agentmsg": {"sameBlock": True}}}
    text = {"modality": "text", "value": "x"}
    high = {**flagged, "detail": "high"}
    # First item, after a text item, and after an image of another detail: each stays a block of its own.
    for content in ([flagged, image], [text, flagged], [image, high]):
        (back,) = from_adaline([{"role": "user", "content": content}])
        assert all(block.count == 1 for block in back.contents if isinstance(block, am.ImageContent))
    (joined,) = from_adaline([{"role": "user", "content": [image, flagged, flagged]}])
    assert [block.count for block in joined.contents] == [3]  # type: ignore[union-attr]


def test_adaline_reports_a_malformed_same_block_flag() -> None:
    item = {
        "modality": "image",
        "detail": "auto",
        "value": {"type": "url", "url": URL},
        "metadata": {"agentmsg": {"sameBlock": "yes"}},
    }
    first = {"modality": "image", "detail": "auto", "value": {"type": "url", "url": URL}}
    with pytest.raises(am.ValidationError) as info:
        from_adaline([{"role": "user", "content": [first, item]}])
    assert [(v.field, v.rule_id) for v in info.value.violations] == [
        ("[0].content[1].metadata.agentmsg.sameBlock", "adaline.metadata")
    ]


def test_adaline_refuses_audio_lists_like_single_clips() -> None:
    with pytest.raises(am.ValidationError) as info:
        to_adaline([am.UserMessage([am.AudioContent(audio=[WAV, WAV])])])
    assert [v.rule_id for v in info.value.violations] == ["adaline.unsupported"]
