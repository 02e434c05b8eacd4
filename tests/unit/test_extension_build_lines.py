"""Real lines of building or running a GPU extension on a node that does not fit it, with their
sources: the node's CUDA toolkit or GPU generation is the node's software, as DeepSpeed's op
builder and CUDA's missing kernel image are."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

LINES = [
    # kodenii/Responsible-Visual-Editing#4: `sh make.sh` building an op; cpp_extension's message
    # under a bare RuntimeError
    (
        "    raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, torch.version.cuda))\n"
        "RuntimeError: \n"
        "The detected CUDA version (12.4) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "torch-extension-cuda-mismatch",
    ),
    # vllm-project/vllm#8189: a pre-Ampere GPU under vLLM's worker
    (
        "ERROR 01-11 13:09:40 engine.py:366] RuntimeError: Error in model execution (input dumped to"
        " /tmp/err_execute_model_input_20250111-130939.pkl): FlashAttention only supports Ampere GPUs or newer.",
        "flash-attn-gpu-too-old",
    ),
]


@pytest.mark.parametrize(("text", "signature"), LINES)
def test_an_extension_that_does_not_fit_the_node(text: str, signature: str) -> None:
    assert verdict(text) == (signature, "system_software", True)
