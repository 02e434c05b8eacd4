"""Whole excerpts of real logs where the thing that ran the program reports its end: systemd's
"Main process exited, code=..., status=..." and its OOM results, supervisord's unexpected exits and
its FATAL give-up, GNU time's "Command terminated by signal N", PM2's app exit, gitlab-runner's
service log, docker inspect's exit code (with its OOMKilled field read as it says), CI steps and
subprocess errors carrying 128+n or -n, each with where it was printed; and the alarming but
harmless lines the same tools print on a planned stop or for a running container, which must stay
healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import verdict

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # kyuupichan/electrumx: systemd reports the service's main process killed by SIGKILL (result 'signal'); no cause in the log.
    (
        "https://github.com/kyuupichan/electrumx/issues/42",
        "Nov 23 15:08:51 ElectrumX systemd[1]: electrumx.service: Main process exited, code=killed, status=9/KILL\n"
        "Nov 23 15:08:51 ElectrumX systemd[1]: electrumx.service: Unit entered failed state.\n"
        "Nov 23 15:08:51 ElectrumX systemd[1]: electrumx.service: Failed with result 'signal'.",
        "unknown",
        True,
        "runner-systemd-main-process-killed",
    ),
    # systemd/systemd: systemd-oomd killed the unit's processes for memory pressure; systemd then reports the main process killed by SIGKILL.
    (
        "https://github.com/systemd/systemd/pull/20690",
        "Sep 10 14:59:49 image systemd-oomd[34]: Memory pressure for /testsuite.slice/testsuite-55.slice/testsuite-55-workload.slice is 64.15% > 1.00% for > 30s with reclaim activity\n"
        "Sep 10 14:59:49 image systemd-oomd[34]: oomd attempting to kill 63 with KILL\n"
        "Sep 10 14:59:49 image systemd-oomd[34]: oomd attempting to kill 66 with KILL\n"
        "Sep 10 14:59:49 image systemd-oomd[34]: Killed /testsuite.slice/testsuite-55.slice/testsuite-55-workload.slice/testsuite-55-testbloat.service due to memory pressure for /testsuite.slice/testsuite-55.slice/testsuite-55-workload.slice be>\n"
        "Sep 10 14:59:49 image systemd[1]: testsuite-55-testbloat.service: systemd-oomd killed 2 process(es) in this unit.\n"
        "Sep 10 14:59:49 image systemd[1]: testsuite-55-testbloat.service: Main process exited, code=killed, status=9/KILL\n"
        "Sep 10 14:59:49 image systemd[1]: testsuite-55-testbloat.service: Failed with result 'signal'.\n"
        "Sep 10 14:59:49 image systemd[1]: testsuite-55-testbloat.service: Triggering OnFailure= dependencies.\n"
        "Sep 10 14:59:49 image systemd[1]: testsuite-55-testbloat.service: Consumed 5.688s CPU time.",
        "out_of_memory",
        False,
        "runner-systemd-oom-kill",
    ),
    # systemd/systemd: systemd reports the main process dumped core on signal 31 (SIGSYS), result 'core-dump'.
    (
        "https://github.com/systemd/systemd/pull/21077",
        "exec-systemcallfilter-override-error-action.service: Failed to read oom_kill field of memory.events cgroup attribute: No such file or directory\n"
        "exec-systemcallfilter-override-error-action.service: Child 10739 belongs to exec-systemcallfilter-override-error-action.service.\n"
        "exec-systemcallfilter-override-error-action.service: Main process exited, code=dumped, status=31/SYS\n"
        "exec-systemcallfilter-override-error-action.service: Failed with result 'core-dump'.\n"
        "exec-systemcallfilter-override-error-action.service: Service will not restart (restart setting)\n"
        "exec-systemcallfilter-override-error-action.service: Changed start -> failed\n"
        "Failed to connect to /run/systemd/oom/io.system.ManagedOOM: No such file or directory\n"
        "systemd-oomd varlink unix socket not found, skipping user manager varlink setup\n"
        "exec-systemcallfilter-override-error-action.service: Unit entered failed state.",
        "system_software",
        True,
        "runner-systemd-main-process-bad-syscall",
    ),
    # systemd/systemd: systemd debug log shows the service's main process died of SIGKILL; nothing says who sent it.
    (
        "https://github.com/systemd/systemd/issues/20118",
        "Got disconnect on private connection.\n"
        "Received SIGCHLD from PID 237 (bash).\n"
        "Child 237 (bash) died (code=killed, status=9/KILL)\n"
        "testsuite-55-testbloat.service: Child 237 belongs to testsuite-55-testbloat.service.\n"
        "testsuite-55-testbloat.service: Main process exited, code=killed, status=9/KILL\n"
        "testsuite-55-testbloat.service: Changed running -> stop-sigterm\n"
        "Sent message type=signal sender=n/a destination=n/a path=/org/freedesktop/systemd1/unit/testsuite_2d55_2dtestbloat_2eservice interface=org.freedesktop.DBus.Properties member=PropertiesChanged cookie=49 reply_cookie=0 signature=sa{sv}as err\n"
        "or-name=n/a error-message=n/a\n"
        "Received SIGCHLD from PID 240 (bash).\n"
        "Child 240 (bash) died (code=killed, status=15/TERM)",
        "unknown",
        True,
        "runner-systemd-main-process-killed",
    ),
    # Supervisor/supervisor: supervisord reports its programs terminated by SIGKILL (not expected) again and again after each respawn.
    (
        "https://github.com/Supervisor/supervisor/issues/907",
        "2017-03-14 11:23:36,752 INFO exited: 01 (terminated by SIGKILL; not expected)\n"
        "2017-03-14 11:23:36,754 INFO spawned: '01' with pid 686253\n"
        "2017-03-14 11:23:36,792 INFO success: 01 entered RUNNING state, process has stayed up for > than 0 seconds (startsecs)\n"
        "2017-03-14 11:23:40,757 INFO exited: 11 (terminated by SIGKILL; not expected)\n"
        "2017-03-14 11:23:40,760 INFO spawned: '11' with pid 686272\n"
        "2017-03-14 11:23:40,798 INFO success: 11 entered RUNNING state, process has stayed up for > than 0 seconds (startsecs)\n"
        "2017-03-14 11:23:44,762 INFO exited: 01 (terminated by SIGKILL; not expected)\n"
        "2017-03-14 11:23:44,766 INFO spawned: '01' with pid 686288\n"
        "2017-03-14 11:23:44,804 INFO success: 01 entered RUNNING state, process has stayed up for > than 0 seconds (startsecs)\n"
        "2017-03-14 11:23:48,768 INFO exited: 11 (terminated by SIGKILL; not expected)\n"
        "2017-03-14 11:23:48,770 INFO spawned: '11' with pid 686297\n"
        "2017-03-14 11:23:48,771 INFO success: 11 entered RUNNING state, process has stayed up for > than 0 seconds (startsecs)\n"
        "2017-03-14 11:23:52,773 INFO exited: 01 (terminated by SIGKILL; not expected)",
        "unknown",
        True,
        "runner-supervisord-unexpected-exit",
    ),
    # nasa-jpl-memex/memex-explorer: supervisord's program exits with status 127 at each start and supervisord gives up (FATAL).
    (
        "https://github.com/nasa-jpl-memex/memex-explorer/issues/773",
        "2016-09-04 19:12:10,757 INFO exited: nutch (exit status 127; not expected)\n"
        "2016-09-04 19:12:12,798 INFO spawned: 'nutch' with pid 2168\n"
        "2016-09-04 19:12:12,890 INFO exited: nutch (exit status 127; not expected)\n"
        "2016-09-04 19:12:16,201 INFO spawned: 'nutch' with pid 2211\n"
        "2016-09-04 19:12:16,252 INFO exited: nutch (exit status 127; not expected)\n"
        "2016-09-04 19:12:16,252 INFO gave up: nutch entered FATAL state, too many start retries too quickly",
        "unknown",
        True,
        "runner-supervisord-unexpected-exit",
    ),
    # Supervisor/supervisor: supervisord reports the program exited with status 255, not expected.
    (
        "https://github.com/Supervisor/supervisor/issues/405",
        "2014-03-20 12:05:12,836 INFO exited: myprog (exit status 255; not expected)",
        "unknown",
        True,
        "runner-supervisord-unexpected-exit",
    ),
    # rfk/django-supervisor: supervisord's program keeps exiting (status 0, not expected) right after each spawn.
    (
        "https://github.com/rfk/django-supervisor/issues/15",
        "2012-03-08 12:06:34,223 CRIT Set uid to user 0\n"
        "2012-03-08 12:06:34,265 INFO RPC interface 'supervisor' initialized\n"
        "2012-03-08 12:06:34,266 INFO supervisord started with pid 19530\n"
        "2012-03-08 12:06:35,270 INFO spawned: 'webserver' with pid 19539\n"
        "2012-03-08 12:06:36,177 DEBG fd 7 closed, stopped monitoring <POutputDispatcher at 39415392 for <Subprocess at 38594752 with name webserver in state STARTING> (stdout)>\n"
        "2012-03-08 12:06:36,177 INFO exited: webserver (exit status 0; not expected)\n"
        "2012-03-08 12:06:36,177 DEBG received SIGCLD indicating a child quit\n"
        "2012-03-08 12:06:37,182 INFO spawned: 'webserver' with pid 19553\n"
        "2012-03-08 12:06:38,074 DEBG fd 7 closed, stopped monitoring <POutputDispatcher at 39415392 for <Subprocess at 38594752 with name webserver in state STARTING> (stdout)>\n"
        "2012-03-08 12:06:38,074 INFO exited: webserver (exit status 0; not expected)\n"
        "2012-03-08 12:06:38,074 DEBG received SIGCLD indicating a child quit\n"
        "2012-03-08 12:06:40,080 INFO spawned: 'webserver' with pid 19563",
        "unknown",
        True,
        "runner-supervisord-unexpected-exit",
    ),
    # tesseract-ocr/tesseract: GNU time reports the training command terminated by signal 9; no OOM line in the log.
    (
        "https://github.com/tesseract-ocr/tesseract/issues/2016",
        "Command terminated by signal 9\n"
        'Command being timed: "lstmtraining --model_output ./layersan/layer --continue_from ./layersan/Devanagari.lstm --append_index 5 --net_spec [Lfx192 O1c1] --traineddata ./layersan/san/san.traineddata --train_listfile ./okfonts.txt --eval_listfile ./fontsamples/san.training_files.txt --debug_interval 0 --max_image_MB 12000 --max_iterations 1210000"\n'
        "        User time (seconds): 1408.20\n"
        "        System time (seconds): 16.57\n"
        "        Percent of CPU this job got: 163%\n"
        "        Elapsed (wall clock) time (h:mm:ss or m:ss): 14:32.19\n"
        "        Average shared text size (kbytes): 0\n"
        "        Average unshared data size (kbytes): 0\n"
        "        Average stack size (kbytes): 0\n"
        "        Average total size (kbytes): 0\n"
        "        Maximum resident set size (kbytes): 16282880\n"
        "        Average resident set size (kbytes): 0\n"
        "        Major (requiring I/O) page faults: 13\n"
        "        Minor (reclaiming a frame) page faults: 582567\n"
        "        Voluntary context switches: 156871\n"
        "        Involuntary context switches: 11656\n"
        "        Swaps: 0\n"
        "        File system inputs: 38186040\n"
        "        File system outputs: 881024\n"
        "        Socket messages sent: 0\n"
        "        Socket messages received: 0\n"
        "        Signals delivered: 0\n"
        "        Page size (bytes): 65536\n"
        "        Exit status: 0",
        "unknown",
        True,
        "runner-gnu-time-command-ended",
    ),
    # ruotianluo/pytorch-faster-rcnn: std::bad_alloc (host memory allocation failed) aborts training; GNU time reports signal 6.
    (
        "https://github.com/ruotianluo/pytorch-faster-rcnn/issues/133",
        "iter: 62640 / 70000, total loss: 0.497416\n"
        " >>> rpn_loss_cls: 0.017933\n"
        " >>> rpn_loss_box: 0.117391\n"
        " >>> loss_cls: 0.201398\n"
        " >>> loss_box: 0.160694\n"
        " >>> lr: 0.000100\n"
        "speed: 0.188s / iter\n"
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n"
        "Command terminated by signal 6\n"
        "4804.39user 361.31system 24:31.27elapsed 351%CPU (0avgtext+0avgdata 5163704maxresident)k\n"
        "3392168inputs+3047704outputs (2603major+10877977minor)pagefaults 0swaps",
        "out_of_memory",
        False,
        "cpp-bad-alloc",
    ),
    # lichengunc/mask-faster-rcnn: GNU time reports the training command terminated by signal 11 (segfault) one second in.
    (
        "https://github.com/lichengunc/mask-faster-rcnn/issues/10",
        "+ echo Logging output to experiments/logs/res101_coco_2014_train_minus_refer_valtest+coco_2014_valminusminival_notime_res101.txt.2020-12-07_21-02-53\n"
        "Logging output to experiments/logs/res101_coco_2014_train_minus_refer_valtest+coco_2014_valminusminival_notime_res101.txt.2020-12-07_21-02-53\n"
        "+ set +x\n"
        "+ '[' '!' -f output/res101/coco_2014_train_minus_refer_valtest+coco_2014_valminusminival/notime/res101_mask_rcnn_iter_1250000.pth.index ']'\n"
        "+ [[ ! -z notime ]]\n"
        "+ CUDA_VISIBLE_DEVICES=1\n"
        "+ time python ./tools/trainval_net.py --weight data/imagenet_weights/res101.pth --imdb coco_2014_train_minus_refer_valtest+coco_2014_valminusminival --imdbval coco_2014_minival --iters 1250000 --cfg experiments/cfgs/res101.yml --tag notime --net res101 --set ANCHOR_SCALES '[4,8,16,32]' ANCHOR_RATIOS '[0.5,1,2]' TRAIN.STEPSIZE '[800000]'\n"
        "Command terminated by signal 11\n"
        "3.11user 2.63system 0:01.03elapsed 553%CPU (0avgtext+0avgdata 209312maxresident)k\n"
        "0inputs+16outputs (0major+31535minor)pagefaults 0swaps",
        "unknown",
        True,
        "runner-gnu-time-command-ended",
    ),
    # nilesh2797/zestxml: GNU time reports the train command terminated by signal 11 (segfault).
    (
        "https://github.com/nilesh2797/zestxml/issues/4",
        "./run_cve_data.sh zestxml train\n"
        "running : train using 96 thread(s)\n"
        "loaded input.\n"
        "bs_count         : 120\n"
        "bs_threshold     : 0\n"
        "bs_alpha         : 0.02\n"
        "bs_direct_wt     : 0.8\n"
        "binary_relevance : 1\n"
        "creating Xf Yf map...\n"
        "Command terminated by signal 11\n"
        "\n"
        "Real time : 0:00.92\n"
        "Max RAM : 23984 KB\n"
        "Percent CPU : 41%",
        "unknown",
        True,
        "runner-gnu-time-command-ended",
    ),
    # Unitech/pm2: PM2 reports the app exited with SIGKILL; no cause in the log.
    (
        "https://github.com/Unitech/pm2/issues/1839",
        "app-0 REQUEST response end http://remote.server.com { 'cache-control': 'no-cache',\n"
        "app-0   pragma: 'no-cache',\n"
        "app-0   'content-length': '63106796',\n"
        "app-0   'content-type': 'application/json; charset=utf-8',\n"
        "app-0   expires: '-1',\n"
        "app-0   connection: 'close' }\n"
        "app-0 REQUEST end event http://remote.server.com\n"
        "PM2 App name:core id:0 exited with code SIGKILL",
        "unknown",
        True,
        "runner-pm2-app-exited",
    ),
    # AbdBarho/stable-diffusion-webui-docker: docker inspect shows the container exited with 137 (SIGKILL) and OOMKilled false.
    (
        "https://github.com/AbdBarho/stable-diffusion-webui-docker/issues/457",
        '        "State": {\n'
        '            "Status": "exited",\n'
        '            "Running": false,\n'
        '            "Paused": false,\n'
        '            "Restarting": false,\n'
        '            "OOMKilled": false,\n'
        '            "Dead": false,\n'
        '            "Pid": 0,\n'
        '            "ExitCode": 137,\n'
        '            "Error": "",\n'
        '            "StartedAt": "2023-05-08T08:03:05.553904873Z",\n'
        '            "FinishedAt": "2023-05-08T08:05:05.514785974Z"\n'
        "        },",
        "unknown",
        True,
        "runner-docker-inspect-exit-code",
    ),
    # moby/moby: bash reports the python process Killed and dmesg shows the memory cgroup OOM killer killed it.
    (
        "https://github.com/moby/moby/issues/15621",
        "root@a9eade3085a5:/# python /waste_memory.py\n"
        "Killed\n"
        "root@a9eade3085a5:/# dmesg | tail -n 5\n"
        "[    0.000000] pid ]   uid  tgid total_vm      rss nr_ptes nr_pmds swapents oom_score_adj name\n"
        "[19392.000000]     0 19392     5485      755      15       3      125             0 bash\n"
        "[19417.000000]     0 19417   396156    42487     618       4   266041             0 python\n"
        "[    0.000000] Memory cgroup out of memory: Kill process 19417 (python) score 890 or sacrifice child\n"
        "[    0.000000] Killed process 19417 (python) total-vm:1584624kB, anon-rss:168368kB, file-rss:1580kB",
        "out_of_memory",
        False,
        "host-oom-killer",
    ),
    # numerai/numerai-cli: the CLI's docker run of train.py returned exit status 137 (SIGKILL); no cause in the log.
    (
        "https://github.com/numerai/numerai-cli/issues/24",
        '>   File "c:\\anaconda\\lib\\subprocess.py", line 444, in check_returncode\n'
        "    raise CalledProcessError(self.returncode, self.args, self.stdout,\n"
        "subprocess.CalledProcessError: Command 'docker run --rm -it -v C:\\numerai:/opt/app -w /opt/app 105816820129.dkr.ecr.us-east-1.amazonaws.com/numerai-submission python train.py' returned non-zero exit status 137.",
        "unknown",
        True,
        "uncaught-exception",
    ),
    # MarvinTeichmann/MultiNet: a subprocess died of signal 11 (CalledProcessError exit status -11).
    (
        "https://github.com/MarvinTeichmann/MultiNet/issues/61",
        "subprocess.CalledProcessError: Command returned non-zero exit status -11",
        "unknown",
        True,
        "uncaught-exception",
    ),
    # actions/setup-python: bash reports pytest Killed and the Actions step ends with exit code 137; no OOM line.
    (
        "https://github.com/actions/setup-python/issues/350",
        "  pytest --cov=. --cov-report=xml\n"
        "  shell: /usr/bin/bash -e {0}\n"
        "  env:\n"
        "    pythonLocation: /opt/hostedtoolcache/Python/3.7.12/x64\n"
        "    LD_LIBRARY_PATH: /opt/hostedtoolcache/Python/3.7.12/x64/lib\n"
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.7.12, pytest-7.0.1, pluggy-1.0.0\n"
        "rootdir: /home/runner/work/GaNDLF/GaNDLF\n"
        "plugins: cov-3.0.0\n"
        "collected 30 items\n"
        "\n"
        "/home/runner/work/_temp/0dbe16bb-3052-4a6e-9755-00561fed9f22.sh: line 1:  2930 Killed                  pytest --cov=. --cov-report=xml\n"
        "testing/test_full.py .......\n"
        "Error: Process completed with exit code 137.",
        "unknown",
        True,
        "process-killed",
    ),
    # broadinstitute/gene-hints: bash reports the python job Killed and the step exits 137; no OOM line.
    (
        "https://github.com/broadinstitute/gene-hints/issues/25",
        "100%|██████████| 180/180 [05:35<00:00,  1.87s/it]\n"
        "100%|██████████| 180/180 [05:35<00:00,  1.87s/it]/home/runner/work/_temp/3996971a-eb39-4aaf-91b7-d4ed401873fb.sh: line 1:  1619 Killed                  python gene_hints/gene_hints.py\n"
        "Output to: ./pubmed_citations/data/tmp/prev_timeframe/2021_01_20.tsv\n"
        "Error: Process completed with exit code 137.",
        "unknown",
        True,
        "process-killed",
    ),
    # podman-container-tools/podman: gitlab-runner reports jobs failed with exit code 137 (SIGKILL), no cause logged.
    (
        "https://github.com/podman-container-tools/podman/issues/10825",
        "Apr 17 15:57:31 runner01 gitlab-runner[1701482]: #033[0;33mWARNING: Job failed: exit code 137\n"
        "Apr 18 09:29:51 runner01 gitlab-runner[1701482]: #033[0;33mWARNING: Job failed: exit code 137\n"
        "Apr 18 14:13:03 runner01 gitlab-runner[1701482]: #033[0;33mWARNING: Job failed: exit code 137\n"
        "Apr 19 10:38:03 runner01 gitlab-runner[1701482]: #033[0;33mWARNING: Job failed: exit code 137",
        "unknown",
        True,
        "runner-gitlab-job-failed",
    ),
    # kubernetes/kubernetes: docker inspect shows the container exited 137 with OOMKilled false.
    (
        "https://github.com/kubernetes/kubernetes/issues/19825",
        '    "State": {\n'
        '        "Status": "exited",\n'
        '        "Running": false,\n'
        '        "Paused": false,\n'
        '        "Restarting": false,\n'
        '        "OOMKilled": false,\n'
        '        "Dead": false,\n'
        '        "Pid": 0,\n'
        '        "ExitCode": 137,\n'
        '        "Error": "",\n'
        '        "StartedAt": "2016-02-01T21:50:35.794765356Z",\n'
        '        "FinishedAt": "2016-02-01T21:50:51.171492914Z"\n'
        "    },",
        "unknown",
        True,
        "runner-docker-inspect-exit-code",
    ),
    # openai/improved-diffusion: the training script is Killed right after it starts training; no cause logged.
    (
        "https://github.com/openai/improved-diffusion/issues/74",
        "python ~/improved-diffusion-main/scripts/image_train.py --data_dir ~/train1000 --image_size 64 --num_channels 128 --num_res_blocks 3 --diffusion_steps 4000 --noise_schedule linear --lr 1e-4 --batch_size 128\n"
        "Logging to /tmp/openai-2023-02-08-04-54-58-637829\n"
        "creating model and diffusion...\n"
        "creating data loader...\n"
        "training...\n"
        "Killed",
        "unknown",
        True,
        "process-killed",
    ),
    # Supervisor/supervisor: supervisord's program keeps exiting (status 0, not expected) right after each spawn.
    (
        "https://github.com/Supervisor/supervisor/issues/1663",
        "2024-10-30 04:42:49,149 INFO spawned: 'postgresql' with pid 1102\n"
        "2024-10-30 04:42:49,192 WARN exited: postgresql (exit status 0; not expected)\n"
        "2024-10-30 04:42:52,532 INFO spawned: 'postgresql' with pid 1288\n"
        "2024-10-30 04:42:52,567 WARN exited: postgresql (exit status 0; not expected)\n"
        "2024-10-30 04:42:56,641 INFO spawned: 'postgresql' with pid 1325\n"
        "2024-10-30 04:42:56,676 WARN exited: postgresql (exit status 0; not expected)\n"
        "2024-10-30 04:43:02,642 INFO spawned: 'postgresql' with pid 1330\n"
        "2024-10-30 04:43:02,676 WARN exited: postgresql (exit status 0; not expected)",
        "unknown",
        True,
        "runner-supervisord-unexpected-exit",
    ),
    # tranleanh/edn-gtm: a Chinese-locale shell reports the training script killed (已杀死) while loading images; no cause logged.
    (
        "https://github.com/tranleanh/edn-gtm/issues/2",
        "672 2975\n673 2975\n674 2975\n675 2975\n676 2975\n677 2975\n678 2975\n679 2975\n680 2975\n681 2975\n已杀死",
        "unknown",
        True,
        "process-killed",
    ),
    # HRNet/HigherHRNet-Human-Pose-Estimation: torch.multiprocessing.spawn reports process 1 terminated with SIGKILL mid-epoch; no cause logged.
    (
        "https://github.com/HRNet/HigherHRNet-Human-Pose-Estimation/issues/47",
        "Epoch: [19][300/7922]\tTime: 0.630s (0.682s)\tSpeed: 12.7 samples/s\tData: 0.000s (0.173s)\tStage0-heatmaps: 1.333e-04 (2.700e-04)\tStage1-heatmaps: 5.821e-05 (1.006e-04)\tStage0-push: 1.250e-04 (2.166e-04)\tStage1-push: 0.000e+00 (0.000e+00)\tStage0-pull: 5.478e-10 (1.137e-09)\tStage1-pull: 0.000e+00 (0.000e+00)\t\n"
        "Traceback (most recent call last):\n"
        '  File "tools/dist_train.py", line 425, in <module>\n'
        "    main()\n"
        '  File "tools/dist_train.py", line 114, in main\n'
        "    args=(ngpus_per_node, args, final_output_dir, tb_log_dir)\n"
        '  File "/home/user/.local/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 171, in spawn\n'
        "    while not spawn_context.join():\n"
        '  File "/home/user/.local/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 107, in join\n'
        "    (error_index, name)\n"
        "Exception: process 1 terminated with signal SIGKILL\n"
        "/usr/lib/python3.6/multiprocessing/semaphore_tracker.py:143: UserWarning: semaphore_tracker: There appear to be 20 leaked semaphores to clean up at shutdown\n"
        "  len(cache))",
        "unknown",
        True,
        "torch-spawn-process-signalled",
    ),
    # sbinet/go-python: the IDE reports the process finished with exit code 137 (SIGKILL).
    (
        "https://github.com/sbinet/go-python/issues/85",
        "Process finished with exit code 137 (interrupted by signal 9: SIGKILL) ",
        "unknown",
        True,
        "process-killed",
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_supervisor_reports_the_end(source: str, text: str, category: str, retryable: bool, signature: str) -> None:
    assert verdict(text) == (signature, category, retryable), source


def test_oomkilled_false_is_not_an_oom_kill() -> None:
    # AbdBarho/stable-diffusion-webui-docker issue 457: docker inspect says the memory limit did not do it.
    text = '            "OOMKilled": false,\n            "ExitCode": 137,'
    assert verdict(text)[1:] == ("unknown", True)


def test_systemd_stop_by_sigterm_stays_healthy() -> None:
    # systemd/systemd issue 13372: a service's main process ending on the SIGTERM of its stop.
    assert verdict("systemd[1]: ssss.service: Main process exited, code=killed, status=15/TERM")[1] == "none"


HEALTHY = [
    # https://github.com/Unitech/pm2/issues/1541: the user stopped pm2 with Ctrl-C; the app exited with code 0 and pm2 exited peacefully.
    "C2015-08-19 18:24:22: pm2 has been killed by signal, dumping process list before exit...\n"
    "2015-08-19 18:24:22: Stopping app:server id:0\n"
    "18:24:22 PM2 pm2 has been killed by signal, dumping process list before exit...\n"
    "18:24:22 PM2 Stopping app:server id:0\n"
    "2015-08-19 18:24:22: App name:server id:0 exited with code 0\n"
    "18:24:22 PM2 App name:server id:0 exited with code 0\n"
    "2015-08-19 18:24:22: Process with pid 18004 killed\n"
    "2015-08-19 18:24:22: [PM2] Exited peacefully",
    # https://github.com/Supervisor/supervisor/pull/1390: a planned docker stop; supervisord stops its programs (exit status 0, one by SIGTERM) and an expected exit.
    "Nov 18 18:55:15.179829 sonic INFO pmon#supervisord 2020-11-18 18:54:38,765 INFO stopped: syseepromd (exit status 0)\n"
    "Nov 18 18:55:15.179909 sonic INFO pmon#supervisord 2020-11-18 18:54:38,819 INFO stopped: psud (exit status 0)\n"
    "Nov 18 18:55:15.179990 sonic INFO pmon#supervisord 2020-11-18 18:54:38,926 INFO stopped: xcvrd (exit status 0)\n"
    "Nov 18 18:55:15.180071 sonic INFO pmon#supervisord 2020-11-18 18:54:40,933 INFO stopped: rsyslogd (exit status 0)\n"
    "Nov 18 18:55:15.180154 sonic INFO pmon#supervisord 2020-11-18 18:54:40,936 WARN stopped: supervisor-proc-exit-listener (terminated by SIGTERM)\n"
    "Nov 18 18:55:25.190196 sonic INFO pmon#supervisord 2020-11-18 18:55:20,882 INFO exited: start (exit status 0; expected)",
    # https://github.com/podman-container-tools/podman/issues/20765: podman inspect of a running container (ExitCode 0, OOMKilled false, no finish time).
    '               "Paused": false,\n'
    '               "Restarting": false,\n'
    '               "OOMKilled": false,\n'
    '               "Dead": false,\n'
    '               "Pid": 5096,\n'
    '               "ConmonPid": 5094,\n'
    '               "ExitCode": 0,\n'
    '               "Error": "",\n'
    '               "StartedAt": "2023-11-23T16:47:59.038994811Z",\n'
    '               "FinishedAt": "0001-01-01T00:00:00Z",\n'
    '               "Health": {\n'
    '                    "Status": "",\n'
    '                    "FailingStreak": 0,\n'
    '                    "Log": null\n'
    "               },",
    # https://github.com/Supervisor/supervisor/issues/321: supervisord asked to exit stops its program (exit status 143 of the SIGTERM it sent), restarts and the program runs again.
    "2013-10-15 15:45:20,705 WARN received SIGTERM indicating exit request\n"
    "2013-10-15 15:45:20,764 INFO waiting for queue to die\n"
    "2013-10-15 15:45:20,810 INFO stopped: queue (exit status 143)\n"
    "2013-10-15 15:45:22,691 CRIT Supervisor running as root (no user in config file)\n"
    '2013-10-15 15:45:22,691 WARN Included extra file "/etc/supervisor/conf.d/queue.conf" during parsing\n'
    "2013-10-15 15:45:22,772 INFO RPC interface 'supervisor' initialized\n"
    "2013-10-15 15:45:22,772 WARN cElementTree not installed, using slower XML parser for XML-RPC\n"
    "2013-10-15 15:45:22,772 CRIT Server 'unix_http_server' running without any HTTP authentication checking\n"
    "2013-10-15 15:45:22,779 INFO daemonizing the supervisord process\n"
    "2013-10-15 15:45:22,780 INFO supervisord started with pid 19059\n"
    "2013-10-15 15:45:23,789 INFO spawned: 'queue' with pid 19061\n"
    "2013-10-15 15:45:25,299 INFO success: queue entered RUNNING state, process has stayed up for > than 1 seconds (startsecs)",
    # https://github.com/Supervisor/supervisor/issues/1378: supervisord spawns its programs and they enter RUNNING.
    "2020-10-15 10:21:51,216 INFO spawned: 'sn_ZYF_15M_H1_FS_FO_yuanxicta1' with pid 441023\n"
    "2020-10-15 10:21:51,217 INFO spawned: 'Ccombine11_yuanxicta1' with pid 441025\n"
    "2020-10-15 10:21:51,219 INFO spawned: 'hc_ZYF_15M_H1_FS_FO_yuanxicta1' with pid 441026\n"
    "2020-10-15 10:21:51,220 INFO spawned: 'rb_ZYF_15M_H1_FS_FO_yuanxicta1' with pid 441027\n"
    "2020-10-15 10:21:51,222 INFO spawned: 'AP_ZYF_3510M_H1_FS_FO_yuanxicta1' with pid 441028\n"
    "2020-10-15 10:21:52,288 INFO success: bu_ZYF_15M_H1_FS_FO_yuanxicta1 entered RUNNING state, process has stayed up for > than 1 seconds (startsecs)\n"
    "2020-10-15 10:21:52,288 INFO success: jm_ZYF_15M_H1_FS_FO_yuanxicta1 entered RUNNING state, process has stayed up for > than 1 seconds (startsecs)",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_planned_stops_stay_healthy(text: str) -> None:
    assert verdict(text)[1] == "none"
