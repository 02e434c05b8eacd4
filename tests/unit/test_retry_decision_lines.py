"""Real lines where whether to rerun a job turns on a message, not on the exception's class: the
HTTP status an HTTP error carries (tables/http_status.yaml), Detectron2's stop on a non-finite loss
(tables/frameworks.yaml) and the errno in Rust's io::Error text (structure.errno_fact). Each line
names the public thread that printed it; healthy lines that must stay healthy are at the end."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, diagnose, verdict

FAILED = [
    # bigcode-project/starcoder#1: the Hub answered 401 (gated model, no token); a rerun asks again
    (
        TRACEBACK + "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url:"
        " https://huggingface.co/bigcode/starcoder/resolve/main/tokenizer_config.json",
        ("http-status-401", "application", False),
    ),
    # hpcaitech/ColossalAI#2781: the same status, the message cut before the URL
    (
        TRACEBACK + "requests.exceptions.HTTPError: 401 Client Error: Unauthorized",
        ("http-status-401", "application", False),
    ),
    # SkyWorkAIGC/SkyText-Chinese-GPT3#5: IPython's header, then the class and the status
    (
        "HTTPError                                 Traceback (most recent call last)\n"
        "HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/SkyWork/SkyText/resolve/main/config.json",
        ("http-status-401", "application", False),
    ),
    # huggingface/transformers#12940: a 403 quoted without its class
    (
        "403 Client Error: Forbidden for url: https://huggingface.co/bert-base-uncased/resolve/main/config.json",
        ("http-status-403", "application", False),
    ),
    # huggingface/transformers#15487: the Hub's gateway failed; it was back up the same day
    (
        "502 Server Error: Bad Gateway for url: https://huggingface.co/distilbert-base-uncased/resolve/main/config.json",
        ("http-status-502", "network", True),
    ),
    # SYSTRAN/faster-whisper#212
    (
        "504 Server Error: Gateway Time-out for url:"
        " https://huggingface.co/api/models/guillaumekln/faster-whisper-large-v2/revision/main",
        ("http-status-504", "network", True),
    ),
    # huggingface/huggingface_hub#2060
    (
        TRACEBACK + "requests.exceptions.HTTPError: 503 Server Error: Service Temporarily Unavailable for url:"
        " https://huggingface.co/timm/vit_large_patch16_384.augreg_in21k_ft_in1k/resolve/main/model.safetensors",
        ("http-status-503", "network", True),
    ),
    # huggingface/transformers#27952: rate-limited while downloading a dataset; slowing down helps
    (
        TRACEBACK + "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url:"
        " https://huggingface.co/datasets/cerebras/SlimPajama-627B/resolve/2d0accdd/train/chunk1/example_train_3300.jsonl.zst",
        ("http-status-429", "network", True),
    ),
    # amirbar/DETReg#65: urllib's form, torch.hub downloading weights the server refused
    (
        'Downloading: "https://dl.fbaipublicfiles.com/deepcluster/swav_800ep_pretrain.pth.tar" to'
        " C:\\Users\\pc/.cache\\torch\\hub\\checkpoints\\swav_800ep_pretrain.pth.tar\n"
        "urllib.error.HTTPError: HTTP Error 403: Forbidden",
        ("http-status-403", "application", False),
    ),
    # pytorch/pytorch#61755: GitHub's API answers its rate limit with 403; waiting helps
    (
        "--> 649         raise HTTPError(req.full_url, code, msg, hdrs, fp)\n\n"
        "HTTPError: HTTP Error 403: rate limit exceeded",
        ("http-status-rate-limit-exceeded", "network", True),
    ),
    # ypwang61/ThetaEvolve#5: httpx's form (address made neutral)
    (
        "httpx.HTTPStatusError: Server error '503 Service Unavailable' for url 'http://10.0.0.34:3938/generate'\n"
        "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503",
        ("http-status-503", "network", True),
    ),
    # csuhan/opendet2#29: Detectron2's divergence stop, quoted with a mangled class
    (
        "Runtime Error: floatingPointError: Loss became infinite or NaN at iteration=166!\n"
        "loss_dict = {'loss_cls_ce': nan, 'loss_box_reg': nan, 'loss_ins_con': 0.0, 'loss_cls_up': nan}",
        ("detectron2-loss-not-finite", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), FAILED)
def test_the_message_decides_whether_to_retry(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


def test_a_repository_not_found_401_stays_final() -> None:
    # Jiaxuan-Li/EVCap#10: the Hub's own class and the status agree
    text = (
        "huggingface_hub.utils._errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-67ff8411)\n\n"
        "Repository Not Found for url: https://huggingface.co/vicuna-13b-v1.3/resolve/main/tokenizer.model."
    )
    assert verdict(TRACEBACK + text)[1:] == ("application", False)


def test_rusts_os_error_number_is_read_as_an_errno() -> None:
    # meta-pytorch/torchft#30: torchft's lighthouse could not bind its port
    text = TRACEBACK + "RuntimeError: Address already in use (os error 98)"
    found = diagnose(text)
    assert (found.category, found.retryable) == ("network", True)


HEALTHY = [
    # huggingface_hub utils/_http.py http_backoff: the warning it logs before it retries (its format
    # strings, with a Hub URL)
    "HTTP Error 429 thrown while requesting HEAD https://huggingface.co/org/model/resolve/main/config.json\n"
    "Retrying in 1s [Retry 1/5].",
    # open-edge-platform/geti#7155: urllib3 retries a download that timed out
    "2026-07-30 08:50:04.502 | INFO     | app.services.base_weights_service:_download_weights:222 - Downloading"
    " pretrained weights from https://download.openmmlab.com/mmdetection/v2.0/yolox/yolox_l.pth\n"
    "2026-07-30 08:51:27.071 | WARNING  | urllib3.connectionpool:urlopen:869 - Retrying (Retry(total=2,"
    " connect=None, read=None, redirect=None, status=None)) after connection broken by"
    " 'ConnectTimeoutError(<HTTPSConnection(host='download.openmmlab.com', port=443) at 0x7e79a14cb230>,"
    " 'Connection to download.openmmlab.com timed out. (connect timeout=10)')': /mmdetectio",
    # talmolab/sleap#365: TensorFlow's CANCELLED when an input iterator is finalised, then the end
    "Epoch 00013: early stopping\n"
    "2020-06-17 16:46:34.480694: W tensorflow/core/kernels/data/generator_dataset_op.cc:103] Error occurred when"
    " finalizing GeneratorDataset iterator: Cancelled: Operation was cancelled\n"
    "INFO:sleap.nn.training:Finished training loop. [15.9 min]",
    # huggingface/autotrain-advanced#911: an access log's status is not a client's error (address
    # made neutral)
    'INFO:     10.0.0.1:0 - "GET /ui/is_model_training HTTP/1.1" 401 Unauthorized',
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_lines_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
