from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/fixtures/convert/*/expected and findings.txt from the current output",
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def shared_dir(*parts: str) -> Path:
    """A folder of ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.is_dir():
        pytest.skip(f"{path} not found: the shared corpus lives beside the checkout in CI")
    return path
