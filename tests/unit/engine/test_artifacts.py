from __future__ import annotations

from service.engine.launcher.artifacts import engine_artifacts


def test_engine_artifacts_are_the_three_maven_coordinates_in_install_order() -> None:
    dist, knn, neural = engine_artifacts("3.6.0")
    assert dist.coordinate == "org.opensearch.distribution.integ-test-zip:opensearch:3.6.0:zip"
    assert knn.coordinate == "org.opensearch.plugin:opensearch-knn:3.6.0.0:zip"
    assert neural.coordinate == "org.opensearch.plugin:neural-search:3.6.0.0:zip"
    assert (dist.plugin, knn.plugin, neural.plugin) == (None, "opensearch-knn", "opensearch-neural-search")
    assert neural.filename == "neural-search-3.6.0.0.zip"
