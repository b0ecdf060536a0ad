"""A matplotlib figure as base64 PNG text, for the ``<img src="data:...">`` of an offline HTML report.

Why a module of its own: both report sections that draw (:mod:`vulkan.reports.plots` and
:mod:`vulkan.reports.plots_search`) need it, and the first includes the second.
"""

from __future__ import annotations

import base64
import io

__all__ = ["png"]


def png(fig) -> str:
    """``fig`` rendered at 100 dpi, closed (pyplot keeps every open figure alive), base64 encoded."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
