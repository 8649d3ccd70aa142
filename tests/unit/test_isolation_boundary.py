"""The campaign process must never import TVM: only zygote children do."""

import subprocess
import sys


def test_campaign_side_modules_do_not_import_tvm() -> None:
    code = (
        "import sys\n"
        "import seedzer.cli, seedzer.campaign.loop, seedzer.execute.worker_pool, seedzer.finding.store\n"
        "bad = sorted(m for m in sys.modules if m == 'tvm' or m.startswith('tvm.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"campaign process imported TVM modules: {out.stdout[:200]}"
