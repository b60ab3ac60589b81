import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def message(err):  # type and first sentence, without gloo's source location or an address
    text = str(err).split("] ", 1)[-1]
    return f"{type(err).__name__}: {text.split(' [', 1)[0].split('. ', 1)[0]}"


dist.init_process_group("gloo")  # the default timeout: ranks meet however late one starts
dist.barrier()  # both ranks are here
quick = dist.new_group(timeout=timedelta(seconds=1))  # every rank calls it, as a collective
if dist.get_rank() == 0:
    try:
        dist.all_reduce(torch.ones(1), group=quick)  # rank 1 never joins
    except RuntimeError as err:
        with open(sys.argv[1], "w") as f:
            f.write(message(err))
    start = time.monotonic()
    try:  # the default group, which would wait 30 minutes; rank 1 never joins: it exits
        dist.all_reduce(torch.ones(1))
    except RuntimeError as err:
        with open(sys.argv[2], "w") as f:
            f.write(f"{message(err)}\nended within 10 s: {time.monotonic() - start < 10}")
    dist.destroy_process_group()  # rank 0 takes its failed groups down before it exits
else:
    time.sleep(3)  # then rank 1's script ends, and its process exits
