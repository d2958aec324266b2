"""A job whose log grows to a few GB before it fails: the error a user needs is near the end.

``python big_log.py <bytes>`` writes that much ordinary training output (fixed-width lines, written in
1 MB blocks so it is fast), then one real-looking CUDA OOM line and a traceback tail, and exits 1.
The number of ordinary lines is printed on stderr so a test can know the error's line number.
"""

import sys

LINE = (
    b"slurm0-a3-ghpc-8: [rank17]: iteration   1200/ 500000 | consumed samples: 1228800 | "
    b"elapsed time per iteration (ms): 812.4 | learning rate: 2.999E-04 | lm loss: 2.431245E+00 |\n"
)


def main() -> None:
    target = int(sys.argv[1])
    per_block = (1 << 20) // len(LINE)
    block = LINE * per_block
    out = sys.stdout.buffer
    lines = 0
    while lines * len(LINE) < target:
        out.write(block)
        lines += per_block
    out.write(
        b"slurm0-a3-ghpc-8: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        b"20.00 MiB. GPU 3 has a total capacity of 79.15 GiB of which 3.06 MiB is free.\n"
    )
    out.write(LINE * 3)
    out.flush()
    print(f"ordinary lines before the error: {lines}", file=sys.stderr, flush=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
