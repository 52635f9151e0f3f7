"""Named production releases: every params class carries ``release``, newest by default.

The release table follows the public sources named in each entry (sysread/thatch,
BasedHardware/omi, alphaonedev/ai-memory-mcp); the rules that depend on a release are
tested beside their engines.
"""

import pytest

from thatchlab.core.errors import ParamsError, ThatchlabError
from thatchlab.core.params import (
    RELEASES,
    AnticipationParams,
    BeliefParams,
    CalibrationParams,
    ReleaseError,
    ScoringParams,
    at_least,
    latest_release,
    release_info,
    resolve_release,
)
from thatchlab.core.params.production import RELEASES as PROD_RELEASES
from thatchlab.core.params.production import differences, production_params, setting


def test_the_release_table_names_every_system_oldest_first():
    assert PROD_RELEASES is RELEASES
    assert {s: [r.name for r in rs] for s, rs in RELEASES.items()} == {
        "thatch": ["v0.1.30", "07ecf87"],
        "omi": ["4d5d5c5", "17fecf7"],
        "ai-memory": ["v0.7.0", "a78a228", "0a5770a"],
        "mnemo": ["seed"],
    }
    scoring = {s.path: s.commit for s in release_info("thatch", "07ecf87").sources}
    assert scoring["src/scoring-engine.ts"] == "0182ac19" and scoring["src/runtime.ts"] == "07ecf879"
    omi = {s.path.rsplit("/", 1)[1]: (s.commit, s.kind) for s in release_info("omi", "17fecf7").sources}
    assert omi["belief_evidence.py"] == ("17fecf7a", "blob")
    assert omi["belief_source_policy.py"] == ("d3bbcc94", "commit")
    assert all(r.sources for s, rs in RELEASES.items() if s != "mnemo" for r in rs)


@pytest.mark.parametrize("cls, newest", [(ScoringParams, "07ecf87"), (BeliefParams, "17fecf7"),
                                         (CalibrationParams, "0a5770a"), (AnticipationParams, "seed")])
def test_every_params_class_defaults_to_the_newest_release(cls, newest):
    assert cls().release == newest
    assert cls(release="latest").release == newest
    assert cls(release="latest") == cls()
    assert cls.from_dict(cls().to_dict()) == cls()


def test_older_releases_are_selectable_by_name_or_longer_commit_id():
    assert ScoringParams(release="v0.1.30").release == "v0.1.30"
    assert ScoringParams(release="07ecf8794e4d47e7fde538b5338ebef3ba7a0cf7").release == "07ecf87"
    assert BeliefParams(release="4d5d5c5").release == "4d5d5c5"
    assert [CalibrationParams(release=r).release for r in ("v0.7.0", "a78a228", "0a5770a")] == \
        ["v0.7.0", "a78a228", "0a5770a"]


@pytest.mark.parametrize("cls, bad", [(ScoringParams, "v0.1.31"), (BeliefParams, "07ecf87"),
                                      (CalibrationParams, None), (AnticipationParams, "fraction")])
def test_an_unknown_release_is_a_typed_error_listing_the_known_ones(cls, bad):
    with pytest.raises(ReleaseError) as err:
        cls(release=bad)
    assert isinstance(err.value, ParamsError) and isinstance(err.value, ThatchlabError)
    known = [r.name for r in RELEASES[{"ScoringParams": "thatch", "BeliefParams": "omi",
                                       "CalibrationParams": "ai-memory",
                                       "AnticipationParams": "mnemo"}[cls.__name__]]]
    for name in known:
        assert name in str(err.value)
    assert "latest" in str(err.value)


def test_release_ordering():
    assert at_least("thatch", "07ecf87", "v0.1.30") and not at_least("thatch", "v0.1.30", "07ecf87")
    assert at_least("ai-memory", "latest", "a78a228")
    assert resolve_release("prediction", "latest") == latest_release("thatch") == "07ecf87"


def test_the_release_decides_the_item_dedup_scope_unless_a_study_overrides_it():
    # v0.1.30's findNearestItem searched the target store only; 07ecf87's update and codify
    # search [store, "global"] (sysread/thatch src/prediction.ts @97212df2)
    assert ScoringParams(release="v0.1.30").item_dedup_scope == "store"
    assert ScoringParams(release="07ecf87").item_dedup_scope == "store+global"
    assert ScoringParams(release="v0.1.30", dedup_scope="store+global").item_dedup_scope == "store+global"


def test_mnemo_replays_its_sql_by_default():
    assert AnticipationParams().mode == "seed"
    assert setting("anticipation", "mode").kind == "none"


def test_the_release_is_declared_never_a_difference_nor_shipped():
    assert setting("prediction", "release").kind == "release"
    assert differences("prediction", ScoringParams(release="v0.1.30", k=2.0)) == {"k": 2.0}
    assert production_params("prediction", "v0.1.30").release == "v0.1.30"
    assert production_params("calibration").decay_on_recall is False
    assert production_params("calibration", "v0.7.0").release == "v0.7.0"
