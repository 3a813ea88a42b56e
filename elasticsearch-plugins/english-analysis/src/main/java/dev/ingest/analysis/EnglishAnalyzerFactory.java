package dev.ingest.analysis;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.AnalyzerFactory;

/**
 * The {@code english} analyzer for the integ-test distribution of Elasticsearch, which lacks the
 * analysis-common module that defines it in full distributions.
 *
 * <p>It returns Lucene's {@link EnglishAnalyzer} with its default English stop words and no stem
 * exclusions: the analyzer Elasticsearch's own {@code english} analyzer wraps, so tokens are the
 * same ("Invoicing" becomes "invoic", "Carers" "carer", "phones" "phone").
 */
@NamedComponent("english")
public class EnglishAnalyzerFactory implements AnalyzerFactory {

    @Override
    public Analyzer create() {
        return new EnglishAnalyzer();
    }
}
