"""An amount of bytes as a person reads it: ``371 KB``, ``1.5 MB``, ``16 MB`` (never ``0 MB`` for 371 KB)."""

from __future__ import annotations


def size_text(n: int) -> str:
    """``n`` bytes in the largest unit that keeps a whole number in front; one decimal below ten units."""
    if n < 1024:
        return f"{n} bytes" if n != 1 else "1 byte"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1023.5 or unit == "TB":  # what would print as "1,024 KB" is "1.0 MB"
            break
    return f"{value:.1f} {unit}" if value < 9.95 and value != int(value) else f"{value:,.0f} {unit}"
