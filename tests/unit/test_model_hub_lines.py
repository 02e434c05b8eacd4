"""Real lines of Hugging Face transformers' OSErrors (tables/model_hub.yaml), each with the public
thread that printed it: the message, not the bare OSError class, says network or configuration."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, verdict

LINES = [
    # CASIA-LMC-Lab/FiLo#10 (also open-mmlab/mmdetection#12349): no route to the Hub, nothing cached
    (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached"
        " files and it looks like bert-base-uncased is not the path to a directory containing a file named"
        " config.json.",
        ("hf-hub-unreachable", "network", True),
    ),
    # aistudynow/Comfyui-HunyuanFoley#6: the newer wording
    (
        "  raise OSError(\nOSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't"
        " find them in the cached files.",
        ("hf-hub-unreachable", "network", True),
    ),
    # EleutherAI/lm-evaluation-harness#995: `pretrained=model` named no folder and no Hub model
    (
        "OSError: model is not a local folder and is not a valid model identifier listed on"
        " 'https://huggingface.co/models'",
        ("hf-model-not-found", "application", False),
    ),
    # LAION-AI/CLAP#134: the summary alone says neither a wrong path nor an unreachable Hub
    (
        "OSError: Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from"
        " 'https://huggingface.co/models', make sure you don't have a local directory with the same name."
        " Otherwise, make sure 'bert-base-uncased' is the correct path to a directory containing all relevant"
        " files for a BertTokenizer tokenizer.",
        ("hf-cannot-load", "unknown", True),
    ),
]


@pytest.mark.parametrize(("text", "expected"), LINES)
def test_the_message_of_transformers_oserror_decides(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(TRACEBACK + text) == expected


def test_the_summary_gives_way_to_the_line_that_says_why() -> None:
    # both lines from the threads above, in the order transformers raises them
    log = (
        TRACEBACK + "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find"
        " them in the cached files.\n"
        "OSError: Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from"
        " 'https://huggingface.co/models', make sure you don't have a local directory with the same name."
    )
    assert verdict(log) == ("hf-hub-unreachable", "network", True)
