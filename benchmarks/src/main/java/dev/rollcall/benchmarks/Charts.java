package dev.rollcall.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The charts next to the tables: scenarios hand their series over while they run (any thread), and
 * {@link #write} draws each chart as a PNG (JFreeChart, headless AWT) and returns the Markdown that
 * shows them. A chart whose scenario did not run is not drawn.
 *
 * <ul>
 *   <li>{@link #curve}: a step curve, e.g. compatible workers over time since the push;</li>
 *   <li>{@link #distribution}: the cumulative distribution of durations, on a log axis;</li>
 *   <li>{@link #bar}: one value per category and series, e.g. failed jobs per way of restarting.</li>
 * </ul>
 */
final class Charts {

    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x7f7f7f),
        new Color(0x2ca02c), new Color(0xff7f0e)};

    /** One chart: its kind, title, axis labels and series in the order they were first given. */
    private static final class Chart {
        final String kind;
        final String title;
        final String xLabel;
        final String yLabel;
        final Map<String, double[][]> series = new LinkedHashMap<>();
        final Map<String, Map<String, Double>> bars = new LinkedHashMap<>();

        Chart(String kind, String title, String xLabel, String yLabel) {
            this.kind = kind;
            this.title = title;
            this.xLabel = xLabel;
            this.yLabel = yLabel;
        }
    }

    private static final Map<String, Chart> CHARTS = new LinkedHashMap<>();

    private Charts() {
    }

    /** Sets the step curve {@code series} of chart {@code id}: {@code y[i]} from {@code seconds[i]} on (replaces an earlier one). */
    static synchronized void curve(String id, String title, String yLabel, String series, double[] seconds, double[] y) {
        chart(id, "curve", title, "seconds since the push", yLabel).series.put(series, new double[][] {seconds, y});
    }

    /** Sets the distribution {@code series} of chart {@code id} from durations in nanoseconds. */
    static synchronized void distribution(String id, String title, String series, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double[] x = new double[sorted.length];
        double[] y = new double[sorted.length];
        for (int i = 0; i < sorted.length; i++) {
            x[i] = Math.max(sorted[i], 1_000) / 1e6; // ms; at least 1 µs for the log axis
            y[i] = (i + 1) / (double) sorted.length;
        }
        chart(id, "distribution", title, "milliseconds (log scale)", "fraction at most this long").series
                .put(series, new double[][] {x, y});
    }

    /** Sets one bar: {@code value} of {@code series} in {@code category}. */
    static synchronized void bar(String id, String title, String yLabel, String series, String category, double value) {
        chart(id, "bar", title, "", yLabel).bars.computeIfAbsent(series, s -> new LinkedHashMap<>()).put(category, value);
    }

    private static Chart chart(String id, String kind, String title, String x, String y) {
        return CHARTS.computeIfAbsent(id, k -> new Chart(kind, title, x, y));
    }

    /**
     * Draws every chart into {@code dir} as {@code <id>.png} and returns Markdown image lines whose
     * paths are {@code dir} relative to {@code docDir} (where the Markdown goes); "" when none.
     */
    static synchronized String write(Path dir, Path docDir) throws IOException {
        if (CHARTS.isEmpty()) {
            return "";
        }
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        StringBuilder md = new StringBuilder("\nCharts of this run:\n\n");
        for (Map.Entry<String, Chart> e : CHARTS.entrySet()) {
            Path file = dir.resolve(e.getKey() + ".png");
            ChartUtils.saveChartAsPNG(file.toFile(), draw(e.getValue()), 900, 450);
            String rel = docDir.toAbsolutePath().normalize().relativize(file.toAbsolutePath().normalize()).toString()
                    .replace('\\', '/');
            md.append("![").append(e.getValue().title).append("](").append(rel).append(")\n");
        }
        return md.toString();
    }

    private static JFreeChart draw(Chart c) {
        JFreeChart chart;
        if (c.kind.equals("bar")) {
            DefaultCategoryDataset data = new DefaultCategoryDataset();
            c.bars.forEach((series, values) -> values.forEach((category, v) -> data.addValue(v, series, category)));
            chart = ChartFactory.createBarChart(c.title, c.xLabel, c.yLabel, data, PlotOrientation.VERTICAL,
                    data.getRowCount() > 1, false, false);
            CategoryPlot plot = chart.getCategoryPlot();
            plot.getDomainAxis().setMaximumCategoryLabelLines(3);
            BarRenderer r = (BarRenderer) plot.getRenderer();
            r.setBarPainter(new StandardBarPainter());
            r.setShadowVisible(false);
            r.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}",
                    new DecimalFormat("#,##0.##")));
            r.setDefaultItemLabelsVisible(true);
            for (int i = 0; i < data.getRowCount(); i++) {
                r.setSeriesPaint(i, COLORS[i % COLORS.length]);
            }
            plot.setBackgroundPaint(Color.WHITE);
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        } else {
            XYSeriesCollection data = new XYSeriesCollection();
            c.series.forEach((name, xy) -> {
                XYSeries s = new XYSeries(name, true, true);
                if (c.kind.equals("curve") && xy[0].length > 0 && xy[0][0] > 0) {
                    s.add(0, 0);
                }
                for (int i = 0; i < xy[0].length; i++) {
                    s.addOrUpdate(xy[0][i], xy[1][i]);
                }
                data.addSeries(s);
            });
            chart = ChartFactory.createXYLineChart(c.title, c.xLabel, c.yLabel, data, PlotOrientation.VERTICAL, true,
                    false, false);
            XYPlot plot = chart.getXYPlot();
            XYLineAndShapeRenderer r = new XYStepRenderer(); // counts and cumulative fractions change in steps
            for (int i = 0; i < data.getSeriesCount(); i++) {
                r.setSeriesPaint(i, COLORS[i % COLORS.length]);
                boolean floor = data.getSeriesKey(i).toString().contains("floor");
                r.setSeriesStroke(i, floor // dashed: it often runs right under Rollcall's line
                        ? new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f)
                        : new BasicStroke(2f));
                r.setSeriesShapesVisible(i, false);
            }
            plot.setRenderer(r);
            if (c.kind.equals("distribution")) {
                LogarithmicAxis x = new LogarithmicAxis(c.xLabel);
                x.setStrictValuesFlag(false);
                x.setExpTickLabelsFlag(false);
                plot.setDomainAxis(x);
                ((NumberAxis) plot.getRangeAxis()).setRange(0, 1.0);
            }
            plot.setBackgroundPaint(Color.WHITE);
            plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
            plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        }
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        chart.setAntiAlias(true);
        return chart;
    }

    /** Nanosecond offsets as seconds. */
    static double[] seconds(List<Long> nanos) {
        double[] s = new double[nanos.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = nanos.get(i) / 1e9;
        }
        return s;
    }

    static double[] doubles(List<? extends Number> values) {
        double[] d = new double[values.size()];
        for (int i = 0; i < d.length; i++) {
            d[i] = values.get(i).doubleValue();
        }
        return d;
    }

    /** For names: 1,000. */
    static String count(int n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
